#ifndef AEVATAR_CHRONO_CODEX_CODEX_RUN_CANCELS_H_
#define AEVATAR_CHRONO_CODEX_CODEX_RUN_CANCELS_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "os/unique_fd.h"

namespace aevatar::chrono {

inline constexpr size_t kMaxCodexRunIdBytes = 64;

// Whether `run_id` is a caller-chosen run id: 1..64 characters of
// [A-Za-z0-9_-].
bool IsCodexRunId(std::string_view run_id);

// The cancel handles of the managed Codex runs going now, keyed by the
// owner that started each run and the run id it chose (POST /codex/execute's
// `run_id`). A run registers for its lifetime; POST
// /codex/runs/{run_id}/cancel by the same owner makes the run's cancel
// descriptor readable, and the engine kills the run's whole process tree
// (the sandbox's cgroup) at once. Another owner's id, a finished run and an
// unknown id are all the same 404, so nobody learns another owner's runs.
// In memory: a run lives no longer than this process. Thread-safe.
class CodexRunCancels {
 public:
  // A registered run: readable cancel_fd() means "kill the run now".
  // Unregisters on destruction. Move-only.
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&&) = default;
    Registration& operator=(Registration&&) = default;
    ~Registration();
    // -1 for an empty registration (a run without a run id).
    int cancel_fd() const;

   private:
    friend class CodexRunCancels;
    struct Slot;
    CodexRunCancels* owner_ = nullptr;
    std::string key_;
    std::shared_ptr<Slot> slot_;
  };

  // Registers the run `run_id` of `owner`. Errors: Internal when no pipe
  // can be made; AlreadyExists CODEX_RUN_ID_IN_USE (409) when the same owner
  // has a run with this id going already.
  absl::StatusOr<Registration> Register(const std::string& owner, const std::string& run_id);

  // Asks the run to stop; returns OK once its cancel descriptor is readable
  // (the kill itself follows within the engine's poll). NotFound
  // CODEX_RUN_NOT_FOUND (404) unless `owner` has a run `run_id` going.
  absl::Status Cancel(const std::string& owner, const std::string& run_id);

  // Runs registered now.
  size_t size() const;

 private:
  void Unregister(const std::string& key, const Registration::Slot* slot);

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Registration::Slot>> runs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_CODEX_CODEX_RUN_CANCELS_H_
