#ifndef AEVATAR_CHRONO_CODEX_CODEX_ATTACH_H_
#define AEVATAR_CHRONO_CODEX_CODEX_ATTACH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "chrono/codex/codex_runner.h"

namespace aevatar::chrono {

// Idempotency-Key for POST /codex/execute, in memory: the same owner + key +
// request attaches to the run already going (or finished) and gets its
// result; no second Codex run starts. The same owner + key with another
// request is 409 IDEMPOTENCY_KEY_REUSE. A finished run's result is kept for
// `retention_ms` (at least 15 minutes by contract); a run that ended in an
// error (busy, unavailable, sandbox failure) is forgotten at once so that a
// retry runs. Entries are keyed by a digest of owner and key (the raw key is
// not kept). The map lives in this process: a chrono-sandbox restart loses
// running and finished runs (the caller's retry then runs Codex again).
// Thread-safe.
class CodexAttachRegistry {
 public:
  using Run = std::function<absl::StatusOr<CodexRunResult>()>;
  using NowMs = std::function<int64_t()>;

  static constexpr int64_t kDefaultRetentionMs = 15 * 60 * 1000;
  // Finished entries beyond this many are dropped oldest first.
  static constexpr size_t kMaxFinishedEntries = 4096;

  explicit CodexAttachRegistry(NowMs now, int64_t retention_ms = kDefaultRetentionMs);

  // Runs `run` once for (owner, key, fingerprint) and returns its result to
  // every caller with the same triple, waiting for a run in progress.
  absl::StatusOr<CodexRunResult> RunOnce(const std::string& owner, const std::string& key,
                                         const std::string& fingerprint, const Run& run);

  size_t size() const;
  // Callers waiting now for a run in progress to finish.
  int waiting() const;

 private:
  // Fields other than `fingerprint` change only under mu_.
  struct Entry {
    std::string fingerprint;
    bool done = false;
    absl::StatusOr<CodexRunResult> result = absl::UnknownError("pending");
    int64_t finished_ms = 0;
  };
  void SweepLocked(int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const NowMs now_;
  const int64_t retention_ms_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_CODEX_CODEX_ATTACH_H_
