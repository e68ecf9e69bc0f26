#include "http/opened_exchange.h"

#include <deque>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "base/reusable_threads.h"
#include "http/in_process.h"
#include "http/url.h"

namespace aevatar::http {
namespace {

// What the exchange's thread hands the reader. Waits are absl::Mutex
// conditions, re-evaluated whenever `mu` is released, so no state change
// needs a separate notify.
struct Pipe {
  explicit Pipe(size_t queue) : queue_limit(queue) {}
  const size_t queue_limit;
  absl::Mutex mu;
  std::optional<ClientResponse> head ABSL_GUARDED_BY(mu);
  std::deque<std::string> chunks ABSL_GUARDED_BY(mu);
  size_t queued_bytes ABSL_GUARDED_BY(mu) = 0;
  bool done ABSL_GUARDED_BY(mu) = false;
  absl::Status result ABSL_GUARDED_BY(mu);
  bool reader_gone ABSL_GUARDED_BY(mu) = false;
};

bool HeadOrDone(Pipe* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu) { return p->head || p->done; }
bool ChunkOrDone(Pipe* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu) {
  return !p->chunks.empty() || p->done;
}
bool RoomOrGone(Pipe* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu) {
  return p->reader_gone || p->queued_bytes < p->queue_limit;
}

// The body as the exchange's thread queues it.
class PipedBody : public BodyReader {
 public:
  explicit PipedBody(std::shared_ptr<Pipe> pipe) : pipe_(std::move(pipe)) {}
  ~PipedBody() override {
    absl::MutexLock lock(&pipe_->mu);
    pipe_->reader_gone = true;  // the exchange's next chunk stops it
  }

  absl::StatusOr<std::optional<std::string>> Next() override {
    Pipe* p = pipe_.get();
    absl::MutexLock lock(&p->mu, absl::Condition(&ChunkOrDone, p));
    if (p->chunks.empty()) {
      // Ended: a failed exchange must not look like a complete body.
      if (!p->result.ok()) return p->result;
      return std::nullopt;
    }
    std::string chunk = std::move(p->chunks.front());
    p->chunks.pop_front();
    p->queued_bytes -= chunk.size();
    return chunk;
  }

 private:
  const std::shared_ptr<Pipe> pipe_;
};

void RunPiped(const ClientRequest& request, Pipe* p) {
  auto on_headers = [p](const ClientResponse& head) {
    absl::MutexLock lock(&p->mu);
    p->head = head;
  };
  auto on_chunk = [p](std::string_view chunk) {
    absl::MutexLock lock(&p->mu, absl::Condition(&RoomOrGone, p));
    if (p->reader_gone) return false;
    p->chunks.emplace_back(chunk);
    p->queued_bytes += chunk.size();
    return true;
  };
  absl::StatusOr<ClientResponse> response = FetchStreaming(request, on_headers, on_chunk);
  absl::MutexLock lock(&p->mu);
  p->done = true;
  p->result = response.status();
}

// Over a connection: FetchStreaming on a thread of its own (reused from an
// earlier exchange when one is idle), so that the reader owns an exchange
// that goes on without it; the exchange ends by itself within the request's
// timeout at the latest.
absl::StatusOr<OpenedExchange> OpenPiped(ClientRequest request, size_t queue_limit) {
  static base::ReusableThreads* const exchange_threads =
      new base::ReusableThreads(absl::Seconds(10));
  auto pipe = std::make_shared<Pipe>(queue_limit);
  exchange_threads->Run([request = std::move(request), pipe] { RunPiped(request, pipe.get()); });
  auto body = std::make_unique<PipedBody>(pipe);
  Pipe* p = pipe.get();
  ClientResponse head;
  {
    absl::MutexLock lock(&p->mu, absl::Condition(&HeadOrDone, p));
    if (!p->head) return p->result.ok() ? absl::UnavailableError("no answer") : p->result;
    head = *p->head;
  }
  return OpenedExchange{std::move(head), std::move(body)};
}

}  // namespace

absl::StatusOr<OpenedExchange> OpenExchange(ClientRequest request, size_t queue_limit) {
  absl::StatusOr<HttpUrl> url = ParseHttpUrl(request.url);
  if (!url.ok()) return url.status();
  if (!url->tls) {
    if (std::shared_ptr<InProcessPeer> peer = FindInProcessPeer(url->host, url->port)) {
      return OpenInProcessExchange(request, *url, std::move(peer));
    }
  }
  return OpenPiped(std::move(request), queue_limit);
}

}  // namespace aevatar::http
