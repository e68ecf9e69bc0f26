#ifndef AEVATAR_BASE_MUTEX_MODE_H_
#define AEVATAR_BASE_MUTEX_MODE_H_

namespace aevatar::base {

// Debian builds Abseil without NDEBUG, so its Mutex runs in debug mode:
// every lock records the locks its thread holds and checks a process-wide
// lock-order graph behind one global lock (deadlock detection), which every
// thread of a busy service then queues on. A service's main() calls this
// first: it turns that detection off, as an optimized Abseil has it. Test
// binaries do not call it, so in-process tests still have the detection
// find lock-order inversions.
void UseReleaseMutexes();

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_MUTEX_MODE_H_
