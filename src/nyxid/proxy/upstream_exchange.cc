#include "nyxid/proxy/upstream_exchange.h"

#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "base/api_error.h"
#include "base/log.h"
#include "base/reusable_threads.h"
#include "nyxid/proxy/proxy_headers.h"

namespace aevatar::nyxid {
namespace {

// State shared by the exchange thread and the caller's (handler) thread.
// Waits are absl::Mutex conditions, re-evaluated whenever `mu` is released,
// so no state change needs a separate notify.
struct Pipe {
  Pipe(size_t buffer, size_t queue) : buffer_limit(buffer), queue_limit(queue) {}
  const size_t buffer_limit;
  const size_t queue_limit;
  absl::Mutex mu;
  std::optional<http::ClientResponse> head ABSL_GUARDED_BY(mu);
  // The head alone decides the answer: a status without a body, or an
  // event stream (streamed from its first byte).
  bool head_decides ABSL_GUARDED_BY(mu) = false;
  std::deque<std::string> chunks ABSL_GUARDED_BY(mu);
  size_t queued_bytes ABSL_GUARDED_BY(mu) = 0;
  bool done ABSL_GUARDED_BY(mu) = false;
  absl::Status result ABSL_GUARDED_BY(mu);
  bool consumer_gone ABSL_GUARDED_BY(mu) = false;
};

// Conditions on a Pipe, evaluated by absl::Mutex with `mu` held.
bool RoomOrGone(Pipe* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu) {
  return p->consumer_gone || p->queued_bytes < p->queue_limit;
}
// When the caller's thread can decide how to answer: the exchange ended, or
// the head came and either decides alone or the buffer is full (at once for
// a zero buffer_limit). One condition, not "head" and then "body", so that a
// small answer wakes that thread once.
bool ReadyToAnswer(Pipe* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu) {
  return p->done || (p->head && (p->head_decides || p->queued_bytes >= p->buffer_limit));
}
bool ChunkOrDone(Pipe* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu) {
  return !p->chunks.empty() || p->done;
}

// Owned by the response: when the response is destroyed (sent or not), the
// exchange is told nobody is reading any more.
struct ConsumerGuard {
  explicit ConsumerGuard(std::shared_ptr<Pipe> p) : pipe(std::move(p)) {}
  ~ConsumerGuard() {
    absl::MutexLock lock(&pipe->mu);
    pipe->consumer_gone = true;
  }
  std::shared_ptr<Pipe> pipe;
};

absl::Status TypedUpstreamError(const absl::Status& status) {
  // The cause (e.g. a failed TLS verification) is for the operator's log
  // only: it names the upstream's host, which callers never see.
  base::Log(base::LogLevel::kWarn, "proxy.upstream_failed", "",
            {{"cause", std::string(status.message())}});
  switch (status.code()) {
    case absl::StatusCode::kDeadlineExceeded:
      return base::ApiError(absl::StatusCode::kDeadlineExceeded, "PROXY_DEADLINE_EXCEEDED",
                            "the upstream service did not answer within the proxy deadline", 504);
    case absl::StatusCode::kUnavailable:
      return base::ApiError(absl::StatusCode::kUnavailable, "UPSTREAM_UNREACHABLE",
                            "the upstream service is unreachable", 502);
    default:
      return base::ApiError(absl::StatusCode::kUnavailable, "UPSTREAM_RESPONSE_INVALID",
                            "the upstream service gave an unusable answer", 502);
  }
}

// text/event-stream (any parameters, any case): server-sent events, whose
// first event must reach the caller as soon as it arrives.
bool IsEventStream(const http::Headers& headers) {
  const std::string type = headers.Get("Content-Type").value_or("");
  constexpr std::string_view kEventStream = "text/event-stream";
  return type.size() >= kEventStream.size() &&
         absl::EqualsIgnoreCase(absl::string_view(type.data(), kEventStream.size()),
                                absl::string_view(kEventStream.data(), kEventStream.size()));
}

bool HasNoBody(int status, const std::string& method) {
  return method == "HEAD" || (status >= 100 && status < 200) || status == 204 || status == 304;
}

void RunExchange(const http::ClientRequest& request, const std::shared_ptr<Pipe>& pipe) {
  Pipe* p = pipe.get();
  auto on_headers = [p, &request](const http::ClientResponse& head) {
    absl::MutexLock lock(&p->mu);
    p->head = head;
    p->head_decides = HasNoBody(head.status, request.method) || IsEventStream(head.headers);
  };
  auto on_chunk = [p](std::string_view chunk) {
    absl::MutexLock lock(&p->mu, absl::Condition(&RoomOrGone, p));
    if (p->consumer_gone) return false;
    p->chunks.emplace_back(chunk);
    p->queued_bytes += chunk.size();
    return true;
  };
  absl::StatusOr<http::ClientResponse> response =
      http::FetchStreaming(request, on_headers, on_chunk);
  absl::MutexLock lock(&p->mu);
  p->done = true;
  p->result = response.status();
}

}  // namespace

absl::StatusOr<http::Response> ProxyExchange(http::ClientRequest request,
                                             const ExchangeOptions& options) {
  auto pipe = std::make_shared<Pipe>(options.buffer_limit, options.queue_limit);
  Pipe* p = pipe.get();
  const std::string method = request.method;
  // On a thread of its own (reused from an earlier exchange when one is
  // idle), so that a response handed to the server owns its exchange; the
  // exchange ends by itself within the request deadline at the latest.
  static base::ReusableThreads* const exchange_threads =
      new base::ReusableThreads(absl::Seconds(10));
  exchange_threads->Run([request = std::move(request), pipe] { RunExchange(request, pipe); });
  auto guard = std::make_shared<ConsumerGuard>(pipe);

  http::Response response;
  {
    absl::MutexLock lock(&p->mu, absl::Condition(&ReadyToAnswer, p));
    if (!p->head) {
      return TypedUpstreamError(p->result.ok() ? absl::UnavailableError("no answer") : p->result);
    }
    response.status = p->head->status;
    response.headers = DownstreamResponseHeaders(p->head->headers);
    if (HasNoBody(response.status, method)) return response;  // guard stops the exchange
    // A head that decides alone and has a body is an event stream: it streams
    // from the first byte, nothing held back for the buffer to fill. Any
    // other body is done or has filled the buffer by now (ReadyToAnswer).
    if (!p->head_decides) {
      // A failure known before anything is sent can still be answered honestly.
      if (p->done && !p->result.ok()) return TypedUpstreamError(p->result);
      // Decided by size alone (not by timing): small bodies are answered whole.
      if (p->queued_bytes < p->buffer_limit) {
        for (const std::string& chunk : p->chunks) response.body += chunk;
        return response;
      }
    }
  }
  response.stream = [guard](const http::ChunkWriter& write) {
    Pipe* p = guard->pipe.get();
    while (true) {
      std::string chunk;
      {
        absl::MutexLock lock(&p->mu, absl::Condition(&ChunkOrDone, p));
        if (p->chunks.empty()) {
          // Ended: a failed exchange must not look like a complete body.
          if (!p->result.ok()) throw std::runtime_error("upstream exchange failed mid-body");
          return;
        }
        chunk = std::move(p->chunks.front());
        p->chunks.pop_front();
        p->queued_bytes -= chunk.size();
      }
      if (!write(chunk)) return;  // the caller went away; the guard stops the exchange
    }
  };
  return response;
}

}  // namespace aevatar::nyxid
