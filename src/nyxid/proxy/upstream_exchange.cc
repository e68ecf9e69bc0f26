#include "nyxid/proxy/upstream_exchange.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "base/api_error.h"
#include "nyxid/proxy/proxy_headers.h"

namespace aevatar::nyxid {
namespace {

// State shared by the exchange thread and the caller's (handler) thread.
struct Pipe {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<http::ClientResponse> head ABSL_GUARDED_BY(mu);
  std::deque<std::string> chunks ABSL_GUARDED_BY(mu);
  size_t queued_bytes ABSL_GUARDED_BY(mu) = 0;
  bool done ABSL_GUARDED_BY(mu) = false;
  absl::Status result ABSL_GUARDED_BY(mu);
  bool consumer_gone ABSL_GUARDED_BY(mu) = false;
};

// Owned by the response: when the response is destroyed (sent or not), the
// exchange is told nobody is reading any more.
struct ConsumerGuard {
  explicit ConsumerGuard(std::shared_ptr<Pipe> p) : pipe(std::move(p)) {}
  ~ConsumerGuard() {
    std::lock_guard lock(pipe->mu);
    pipe->consumer_gone = true;
    pipe->cv.notify_all();
  }
  std::shared_ptr<Pipe> pipe;
};

absl::Status TypedUpstreamError(const absl::Status& status) {
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

bool HasNoBody(int status, const std::string& method) {
  return method == "HEAD" || (status >= 100 && status < 200) || status == 204 || status == 304;
}

void RunExchange(const http::ClientRequest& request, const std::shared_ptr<Pipe>& pipe,
                 size_t queue_limit) {
  auto on_headers = [&](const http::ClientResponse& head) {
    std::lock_guard lock(pipe->mu);
    pipe->head = head;
    pipe->cv.notify_all();
  };
  auto on_chunk = [&](std::string_view chunk) {
    std::unique_lock lock(pipe->mu);
    pipe->cv.wait(lock, [&] { return pipe->consumer_gone || pipe->queued_bytes < queue_limit; });
    if (pipe->consumer_gone) return false;
    pipe->chunks.emplace_back(chunk);
    pipe->queued_bytes += chunk.size();
    pipe->cv.notify_all();
    return true;
  };
  absl::StatusOr<http::ClientResponse> response =
      http::FetchStreaming(request, on_headers, on_chunk);
  std::lock_guard lock(pipe->mu);
  pipe->done = true;
  pipe->result = response.status();
  pipe->cv.notify_all();
}

}  // namespace

absl::StatusOr<http::Response> ProxyExchange(http::ClientRequest request,
                                             const ExchangeOptions& options) {
  auto pipe = std::make_shared<Pipe>();
  const std::string method = request.method;
  // Detached, so that a response handed to the server owns its exchange; the
  // thread ends by itself within the request deadline at the latest.
  std::thread([request = std::move(request), pipe, limit = options.queue_limit] {
    RunExchange(request, pipe, limit);
  }).detach();
  auto guard = std::make_shared<ConsumerGuard>(pipe);

  std::unique_lock lock(pipe->mu);
  pipe->cv.wait(lock, [&] { return pipe->head.has_value() || pipe->done; });
  if (!pipe->head)
    return TypedUpstreamError(pipe->result.ok() ? absl::UnavailableError("no answer")
                                                : pipe->result);
  http::Response response;
  response.status = pipe->head->status;
  response.headers = DownstreamResponseHeaders(pipe->head->headers);
  if (HasNoBody(response.status, method)) return response;  // guard stops the exchange

  pipe->cv.wait(lock, [&] { return pipe->done || pipe->queued_bytes >= options.buffer_limit; });
  // A failure known before anything is sent can still be answered honestly.
  if (pipe->done && !pipe->result.ok()) return TypedUpstreamError(pipe->result);
  // Decided by size alone (not by timing): small bodies are answered whole.
  if (pipe->queued_bytes < options.buffer_limit) {
    for (const std::string& chunk : pipe->chunks) response.body += chunk;
    return response;
  }
  lock.unlock();
  response.stream = [guard](const http::ChunkWriter& write) {
    Pipe& p = *guard->pipe;
    while (true) {
      std::unique_lock stream_lock(p.mu);
      p.cv.wait(stream_lock, [&] { return !p.chunks.empty() || p.done; });
      if (p.chunks.empty()) {
        // Ended: a failed exchange must not look like a complete body.
        if (!p.result.ok()) throw std::runtime_error("upstream exchange failed mid-body");
        return;
      }
      std::string chunk = std::move(p.chunks.front());
      p.chunks.pop_front();
      p.queued_bytes -= chunk.size();
      p.cv.notify_all();
      stream_lock.unlock();
      if (!write(chunk)) return;  // the caller went away; the guard stops the exchange
    }
  };
  return response;
}

}  // namespace aevatar::nyxid
