#include "base/mutex_mode.h"

#include "absl/synchronization/mutex.h"

namespace aevatar::base {

void UseReleaseMutexes() { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); }

}  // namespace aevatar::base
