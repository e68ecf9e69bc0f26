#include "http/in_process.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/log_context.h"
#include "http/header_text.h"
#include "http/server_common.h"

namespace aevatar::http {

// The answer on its way from the handler's thread to the caller's. Waits are
// absl::Mutex conditions, re-evaluated whenever `mu` is released.
struct InProcessConversation {
  absl::Mutex mu;
  std::optional<ClientResponse> head ABSL_GUARDED_BY(mu);  // status and header fields
  std::deque<std::string> chunks ABSL_GUARDED_BY(mu);
  size_t unread_bytes ABSL_GUARDED_BY(mu) = 0;
  bool ended ABSL_GUARDED_BY(mu) = false;        // no chunk comes after these
  bool broken ABSL_GUARDED_BY(mu) = false;       // ... because the handler's stream failed
  bool caller_gone ABSL_GUARDED_BY(mu) = false;  // nobody reads any more
  bool server_gone ABSL_GUARDED_BY(mu) = false;  // the server stopped and ended the exchange
};

namespace {

using Clock = std::chrono::steady_clock;
using Conversation = InProcessConversation;

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

bool HasHeadOrGone(Conversation* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu) {
  return c->head.has_value() || c->server_gone;
}
bool ChunkOrEnded(Conversation* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu) {
  return !c->chunks.empty() || c->ended || c->server_gone;
}
bool RoomOrGone(Conversation* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu) {
  return c->caller_gone || c->server_gone || c->unread_bytes < kUnreadLimit;
}
bool NoneLive(InProcessPeer* peer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(peer->mu) {
  return peer->live.empty();
}

absl::Duration Until(Clock::time_point deadline) {
  return absl::FromChrono(deadline - Clock::now());
}

// A field value as the parser hands it on: without the spaces and tabs
// around it.
std::string Trimmed(std::string_view value) {
  const size_t first = value.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  return std::string(value.substr(first, value.find_last_not_of(" \t") - first + 1));
}

// The Request the server would parse from the client's message (client.cc:
// BuildRequest writes the same fields).
Request ToServedRequest(const ClientRequest& sent, const HttpUrl& url) {
  Request request;
  request.method = sent.method;
  SetTarget(request, url.target);
  for (const auto& [name, value] : sent.headers.fields()) {
    if (WritableField(name, value)) request.headers.Add(name, Trimmed(value));
  }
  if (!request.headers.Get("Host")) request.headers.Add("Host", url.HostHeader());
  if (SendsContentLength(sent.method, sent.body.size())) {
    request.headers.Add("Content-Length", std::to_string(sent.body.size()));
  }
  // Without a pool the client asks for one exchange per connection.
  if (!sent.pool) request.headers.Add("Connection", "close");
  request.body = sent.body;
  request.remote_address = url.host;  // a loopback peer's address is the one it called
  return request;
}

// The 400, 413, 414 or 431 the server's reader would answer `request` with.
std::optional<Response> ReaderProblem(const Request& request, const InProcessPeer& peer) {
  // method SP target SP "HTTP/1.1" CRLF
  const size_t request_line = request.method.size() + request.target.size() + 12;
  if (request_line > peer.max_header_bytes) return UriTooLongResponse(peer.max_header_bytes);
  if (!IsToken(request.method)) return MalformedRequestResponse();
  size_t header_bytes = request_line + 2;  // the empty line that ends the block
  for (const auto& [name, value] : request.headers.fields()) {
    header_bytes += name.size() + value.size() + 4;  // name ": " value CRLF
  }
  if (header_bytes > peer.max_header_bytes) return HeadersTooLargeResponse(peer.max_header_bytes);
  for (const auto& [name, value] : request.headers.fields()) {
    if (!IsToken(name) || !IsFieldValue(value)) return MalformedRequestResponse();
  }
  if (request.body.size() > peer.max_body_bytes) return BodyTooLargeResponse(peer.max_body_bytes);
  return std::nullopt;
}

// The header fields the client would read: the handler's writable ones plus
// the framing the server computes (server_framing.h: BuildResponse).
Headers WireHeaders(const Response& response, bool head, bool close) {
  Headers headers;
  for (const auto& [name, value] : response.headers.fields()) {
    if (WritableField(name, value)) headers.Add(name, value);
  }
  std::optional<std::string> declared = response.headers.Get("Content-Length");
  if (StatusHasNoBody(static_cast<int>(WireStatus(response.status)))) {
    // No body, no length.
  } else if (response.stream) {
    headers.Add("Transfer-Encoding", "chunked");
  } else if (!head || !response.body.empty() || !declared) {
    headers.Add("Content-Length", std::to_string(response.body.size()));
  } else if (!UnsafeHeaderText(*declared)) {
    headers.Add("Content-Length", *declared);
  }
  if (close || WantsClose(response)) headers.Add("Connection", "close");
  return headers;
}

// Hands `response` to the caller through `c`; for a streamed body, runs the
// handler's stream on this thread until it ends or the caller leaves.
void Answer(Response response, bool head, bool close, const std::shared_ptr<Conversation>& c) {
  const int status = static_cast<int>(WireStatus(response.status));
  const bool has_body = !head && !StatusHasNoBody(status);
  const bool streamed = has_body && response.stream;
  {
    absl::MutexLock lock(&c->mu);
    c->head = ClientResponse{status, WireHeaders(response, head, close), {}};
    if (has_body && !streamed && !response.body.empty()) {
      c->unread_bytes = response.body.size();
      c->chunks.push_back(std::move(response.body));
    }
    c->ended = !streamed;
  }
  if (!streamed) return;
  ChunkWriter write = [c](std::string_view chunk) {
    absl::MutexLock lock(&c->mu, absl::Condition(&RoomOrGone, c.get()));
    if (c->caller_gone || c->server_gone) return false;
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
  // A stream the stopping server cut returns as if done: it is not.
  c->broken = !ok || c->server_gone;
}

// The answer as the caller reads it from `c`, under the request's deadline
// and limits. Destroying it tells the handler's side, however the caller
// leaves, that nobody reads, and forgets the exchange in the peer's list.
class InProcessBody : public BodyReader {
 public:
  InProcessBody(std::shared_ptr<Conversation> c, std::shared_ptr<InProcessPeer> peer,
                const ClientRequest& request, std::string where, Clock::time_point deadline)
      : c_(std::move(c)),
        peer_(std::move(peer)),
        timeout_ms_(request.timeout.count()),
        max_response_bytes_(request.max_response_bytes),
        where_(std::move(where)),
        deadline_(deadline) {}
  ~InProcessBody() override {
    {
      absl::MutexLock lock(&c_->mu);
      c_->caller_gone = true;
    }
    if (peer_ != nullptr) {
      absl::MutexLock lock(&peer_->mu);
      peer_->live.erase(c_);
    }
  }

  // The status and header fields, checked as the TCP client's parser would.
  absl::StatusOr<ClientResponse> AwaitHead(const std::string& method) {
    ClientResponse head;
    {
      absl::MutexLock lock(&c_->mu);
      if (!c_->mu.AwaitWithTimeout(absl::Condition(&HasHeadOrGone, c_.get()), Until(deadline_))) {
        return DeadlineError();
      }
      if (!c_->head) return ClosedError();
      head = *c_->head;
    }
    size_t header_bytes = 0;
    for (const auto& [name, value] : head.headers.fields()) {
      header_bytes += name.size() + value.size() + 4;
    }
    if (header_bytes > kMaxResponseHeaderBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("response header from ", where_, " too large"));
    }
    const std::optional<std::string> declared = head.headers.Get("Content-Length");
    if (method != "HEAD" && declared && !declared->empty() &&
        declared->find_first_not_of("0123456789") == std::string::npos && declared->size() < 20 &&
        std::stoull(*declared) > max_response_bytes_) {
      return TooLarge();
    }
    if (Clock::now() >= deadline_) return DeadlineError();
    return head;
  }

  absl::StatusOr<std::optional<std::string>> Next() override {
    std::string chunk;
    {
      absl::MutexLock lock(&c_->mu);
      // A body the handler ended is handed out whatever the time: the
      // exchange is over, what is left is the caller's own reading (a proxy
      // passing it on to a slow client). While the handler still writes, the
      // deadline is checked before every chunk: a caller slower than the
      // handler would otherwise always find one waiting and never reach a
      // timed wait.
      if (!c_->ended) {
        if (Clock::now() >= deadline_) return DeadlineError();
        if (!c_->mu.AwaitWithTimeout(absl::Condition(&ChunkOrEnded, c_.get()), Until(deadline_))) {
          return DeadlineError();
        }
      }
      if (c_->server_gone && !c_->ended) return ClosedError();
      if (c_->chunks.empty()) {
        if (c_->broken) {
          return absl::UnavailableError(absl::StrCat("read ", where_, ": partial message"));
        }
        return std::nullopt;
      }
      chunk = std::move(c_->chunks.front());
      c_->chunks.pop_front();
      c_->unread_bytes -= chunk.size();
    }
    received_ += chunk.size();
    if (received_ > max_response_bytes_) return TooLarge();
    return chunk;
  }

 private:
  absl::Status DeadlineError() const {
    return absl::DeadlineExceededError(
        absl::StrCat("http exchange with ", where_, " exceeded ", timeout_ms_, " ms"));
  }
  absl::Status ClosedError() const {
    return absl::UnavailableError(
        absl::StrCat("read ", where_, ": the server closed the connection as it stopped"));
  }
  absl::Status TooLarge() const {
    return absl::ResourceExhaustedError(
        absl::StrCat("response body from ", where_, " exceeds ", max_response_bytes_, " bytes"));
  }

  const std::shared_ptr<Conversation> c_;
  const std::shared_ptr<InProcessPeer> peer_;  // null: the exchange was never in its list
  const int64_t timeout_ms_;
  const size_t max_response_bytes_;
  const std::string where_;
  const Clock::time_point deadline_;
  size_t received_ = 0;
};

}  // namespace

void StopInProcessPeer(InProcessPeer& peer, Clock::time_point deadline) {
  std::set<std::shared_ptr<Conversation>> rest;
  {
    absl::MutexLock lock(&peer.mu);
    peer.stopping = true;
    peer.mu.AwaitWithTimeout(absl::Condition(&NoneLive, &peer), Until(deadline));
    rest = peer.live;
  }
  for (const std::shared_ptr<Conversation>& c : rest) {
    absl::MutexLock lock(&c->mu);
    c->server_gone = true;
  }
}

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

absl::StatusOr<OpenedExchange> OpenInProcessExchange(const ClientRequest& request,
                                                     const HttpUrl& url,
                                                     std::shared_ptr<InProcessPeer> peer) {
  const Clock::time_point deadline = Clock::now() + request.timeout;
  std::string where = absl::StrCat(url.host, ":", url.port);
  const bool head = request.method == "HEAD";
  const bool close = !request.pool;
  auto c = std::make_shared<Conversation>();
  Request served = ToServedRequest(request, url);
  std::optional<Response> refusal;
  {
    base::ScopedRequestId none("");  // the server's own answers carry no request id
    refusal = ReaderProblem(served, *peer);
    if (!refusal) {
      absl::MutexLock lock(&peer->mu);
      if (peer->stopping) {
        refusal = StoppingResponse();
      } else {
        peer->live.insert(c);
      }
    }
  }
  if (refusal) {
    Answer(*std::move(refusal), head, close, c);
    peer = nullptr;  // never in its list
  } else {
    // The task holds what it needs by value: it may outlive this call.
    auto task = [peer, served = std::move(served), head, close, c]() mutable {
      Response response = CallHandler(peer->handler, served);
      // Only a WebSocket upgrade over TCP can become a session.
      if (response.websocket) response = WebSocketRequiredResponse();
      Answer(std::move(response), head, close, c);
      // The handler is done: a Stop has nothing more to wait for or end
      // here, however long the caller takes to read what it left.
      absl::MutexLock lock(&peer->mu);
      peer->live.erase(c);
    };
    if (!peer->pool->TrySubmit(std::move(task))) {
      bool stopping = false;
      {
        absl::MutexLock lock(&peer->mu);
        stopping = peer->stopping;
      }
      base::ScopedRequestId none("");
      Answer(stopping ? StoppingResponse() : BusyResponse(), head, close, c);
    }
  }
  auto body = std::make_unique<InProcessBody>(std::move(c), std::move(peer), request,
                                              std::move(where), deadline);
  absl::StatusOr<ClientResponse> answer_head = body->AwaitHead(request.method);
  if (!answer_head.ok()) return answer_head.status();
  return OpenedExchange{*std::move(answer_head), std::move(body)};
}

}  // namespace aevatar::http
