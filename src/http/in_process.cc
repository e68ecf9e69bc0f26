#include "http/in_process.h"

#include <deque>
#include <map>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "http/header_text.h"
#include "http/server_common.h"

namespace aevatar::http {
namespace {

// A streamed body waits for the caller past this many unread bytes, as a
// socket's buffers would make it wait.
constexpr size_t kUnreadLimit = 1 << 20;

using Address = std::pair<std::string, uint16_t>;

struct Registry {
  absl::Mutex mu;
  std::map<Address, std::shared_ptr<InProcessPeer>> peers ABSL_GUARDED_BY(mu);
  std::atomic<int> size{0};  // peers.size(), read without the lock
};

// Never destroyed: a server may stop while the process exits.
Registry& TheRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

// The answer on its way from the handler's thread to the caller's. Waits are
// absl::Mutex conditions, re-evaluated whenever `mu` is released.
struct Conversation {
  absl::Mutex mu;
  std::optional<ClientResponse> head ABSL_GUARDED_BY(mu);  // status and header fields
  std::deque<std::string> chunks ABSL_GUARDED_BY(mu);
  size_t unread_bytes ABSL_GUARDED_BY(mu) = 0;
  bool ended ABSL_GUARDED_BY(mu) = false;        // no chunk comes after these
  bool broken ABSL_GUARDED_BY(mu) = false;       // ... because the handler's stream failed
  bool caller_gone ABSL_GUARDED_BY(mu) = false;  // nobody reads any more
};

bool HasHead(Conversation* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu) { return c->head.has_value(); }
bool ChunkOrEnded(Conversation* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu) {
  return !c->chunks.empty() || c->ended;
}
bool RoomOrGone(Conversation* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu) {
  return c->caller_gone || c->unread_bytes < kUnreadLimit;
}

// The Request the server would parse from the client's message.
Request ToServedRequest(const ClientRequest& sent, const HttpUrl& url) {
  Request request;
  request.method = sent.method;
  SetTarget(request, url.target);
  for (const auto& [name, value] : sent.headers.fields()) {
    if (WritableField(name, value)) request.headers.Add(name, value);
  }
  if (!request.headers.Get("Host")) request.headers.Add("Host", url.HostHeader());
  const bool body_method = sent.method == "POST" || sent.method == "PUT" || sent.method == "PATCH";
  if (!sent.body.empty() || body_method) {
    request.headers.Add("Content-Length", std::to_string(sent.body.size()));
  }
  // Without a pool the client asks for one exchange per connection.
  if (!sent.pool) request.headers.Add("Connection", "close");
  request.body = sent.body;
  request.remote_address = url.host;  // a loopback peer's address is the one it called
  return request;
}

// The 413, 414 or 431 the server's reader would answer `request` with.
std::optional<Response> LimitProblem(const Request& request, const InProcessPeer& peer) {
  const size_t request_line = request.method.size() + request.target.size() + 11;
  if (request_line > peer.max_header_bytes) return UriTooLongResponse(peer.max_header_bytes);
  size_t header_bytes = request_line + 2;
  for (const auto& [name, value] : request.headers.fields()) {
    header_bytes += name.size() + value.size() + 4;
  }
  if (header_bytes > peer.max_header_bytes) return HeadersTooLargeResponse(peer.max_header_bytes);
  if (request.body.size() > peer.max_body_bytes) return BodyTooLargeResponse(peer.max_body_bytes);
  return std::nullopt;
}

// The header fields the client would read: the handler's writable ones plus
// the framing the server computes (server_framing.h: BuildResponse).
Headers WireHeaders(const Response& response, bool head) {
  Headers headers;
  for (const auto& [name, value] : response.headers.fields()) {
    if (WritableField(name, value)) headers.Add(name, value);
  }
  if (StatusHasNoBody(response.status)) return headers;
  std::optional<std::string> declared = response.headers.Get("Content-Length");
  if (response.stream) {
    headers.Add("Transfer-Encoding", "chunked");
  } else if (head && response.body.empty() && declared && !UnsafeHeaderText(*declared)) {
    headers.Add("Content-Length", *declared);
  } else {
    headers.Add("Content-Length", std::to_string(response.body.size()));
  }
  return headers;
}

// Hands `response` to the caller through `c`; for a streamed body, runs the
// handler's stream on this thread until it ends or the caller leaves.
void Answer(Response response, bool head, const std::shared_ptr<Conversation>& c) {
  const bool has_body = !head && !StatusHasNoBody(response.status);
  const bool streamed = has_body && response.stream;
  {
    absl::MutexLock lock(&c->mu);
    c->head = ClientResponse{response.status, WireHeaders(response, head), {}};
    if (has_body && !streamed && !response.body.empty()) {
      c->unread_bytes = response.body.size();
      c->chunks.push_back(std::move(response.body));
    }
    c->ended = !streamed;
  }
  if (!streamed) return;
  ChunkWriter write = [c](std::string_view chunk) {
    absl::MutexLock lock(&c->mu, absl::Condition(&RoomOrGone, c.get()));
    if (c->caller_gone) return false;
    if (!chunk.empty()) {  // an empty chunk would end a chunked body early: skipped, as there
      c->chunks.emplace_back(chunk);
      c->unread_bytes += chunk.size();
    }
    return true;
  };
  bool ok = true;
  try {
    response.stream(write);
  } catch (...) {
    ok = false;  // as over TCP: the body ends unfinished, never as a complete one
  }
  absl::MutexLock lock(&c->mu);
  c->ended = true;
  c->broken = !ok;
}

// Tells the handler's side, however the caller leaves, that nobody reads.
struct CallerLeaves {
  ~CallerLeaves() {
    absl::MutexLock lock(&c->mu);
    c->caller_gone = true;
  }
  Conversation* c;
};

// Reads the answer from `c` on the caller's thread, under `deadline`.
absl::StatusOr<ClientResponse> Receive(Conversation& c, const ClientRequest& request,
                                       const std::string& where, absl::Time deadline,
                                       const std::function<void(const ClientResponse&)>* on_headers,
                                       const std::function<bool(std::string_view)>& on_chunk) {
  CallerLeaves leaves{&c};
  auto deadline_error = [&] {
    return absl::DeadlineExceededError(
        absl::StrCat("http exchange with ", where, " exceeded ", request.timeout.count(), " ms"));
  };
  ClientResponse response;
  {
    absl::MutexLock lock(&c.mu);
    if (!c.mu.AwaitWithDeadline(absl::Condition(&HasHead, &c), deadline)) return deadline_error();
    response = *c.head;
  }
  if (on_headers != nullptr) (*on_headers)(response);
  size_t received = 0;
  while (true) {
    std::string chunk;
    {
      absl::MutexLock lock(&c.mu);
      if (!c.mu.AwaitWithDeadline(absl::Condition(&ChunkOrEnded, &c), deadline)) {
        return deadline_error();
      }
      if (c.chunks.empty()) {
        if (c.broken)
          return absl::UnavailableError(absl::StrCat("read ", where, ": partial message"));
        return response;
      }
      chunk = std::move(c.chunks.front());
      c.chunks.pop_front();
      c.unread_bytes -= chunk.size();
    }
    received += chunk.size();
    if (received > request.max_response_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat("response body from ", where, " exceeds ",
                                                       request.max_response_bytes, " bytes"));
    }
    if (!on_chunk(chunk)) {
      return absl::CancelledError("response body consumer stopped the exchange");
    }
  }
}

}  // namespace

void RegisterInProcessPeer(const std::string& host, uint16_t port,
                           std::shared_ptr<InProcessPeer> peer) {
  Registry& registry = TheRegistry();
  absl::MutexLock lock(&registry.mu);
  registry.peers[{host, port}] = std::move(peer);
  registry.size = static_cast<int>(registry.peers.size());
}

void UnregisterInProcessPeer(const std::string& host, uint16_t port, const InProcessPeer* peer) {
  Registry& registry = TheRegistry();
  absl::MutexLock lock(&registry.mu);
  auto found = registry.peers.find({host, port});
  if (found != registry.peers.end() && found->second.get() == peer) registry.peers.erase(found);
  registry.size = static_cast<int>(registry.peers.size());
}

std::shared_ptr<InProcessPeer> FindInProcessPeer(const std::string& host, uint16_t port) {
  Registry& registry = TheRegistry();
  if (registry.size == 0) return nullptr;
  absl::MutexLock lock(&registry.mu);
  auto found = registry.peers.find({host, port});
  return found == registry.peers.end() ? nullptr : found->second;
}

absl::StatusOr<ClientResponse> InProcessExchange(
    const ClientRequest& request, const HttpUrl& url, std::shared_ptr<const InProcessPeer> peer,
    const std::function<void(const ClientResponse&)>* on_headers,
    const std::function<bool(std::string_view chunk)>& on_chunk) {
  const absl::Time deadline = absl::Now() + absl::FromChrono(request.timeout);
  const bool head = request.method == "HEAD";
  auto c = std::make_shared<Conversation>();
  Request served = ToServedRequest(request, url);
  if (std::optional<Response> problem = LimitProblem(served, *peer)) {
    Answer(*std::move(problem), head, c);
  } else if (peer->stopping) {
    Answer(StoppingResponse(), head, c);
  } else {
    // The handler holds what it needs by value: it may outlive this call.
    auto task = [peer, served = std::move(served), head, c]() mutable {
      Response response = CallHandler(peer->handler, served);
      // Only a WebSocket upgrade over TCP can become a session.
      if (response.websocket) response = WebSocketRequiredResponse();
      Answer(std::move(response), head, c);
    };
    if (!peer->pool->TrySubmit(std::move(task))) {
      Answer(peer->stopping ? StoppingResponse() : BusyResponse(), head, c);
    }
  }
  return Receive(*c, request, absl::StrCat(url.host, ":", url.port), deadline, on_headers,
                 on_chunk);
}

}  // namespace aevatar::http
