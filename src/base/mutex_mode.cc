#include "base/mutex_mode.h"

#include "absl/synchronization/mutex.h"

namespace aevatar::base {

void UseReleaseMutexes() {
#ifdef NDEBUG
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

}  // namespace aevatar::base
