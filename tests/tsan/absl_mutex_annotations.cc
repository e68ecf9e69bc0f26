// Linked into ThreadSanitizer builds only (scripts/build tsan).
//
// Debian's Abseil is built without TSan, so TSan cannot see absl::Mutex
// synchronise: every ABSL_GUARDED_BY member would look racy. This file
// interposes the public lock entry points of the shared libabsl_synchronization
// (the TSan build links Abseil dynamically), calls the library's own
// implementation through dlsym(RTLD_NEXT), and tells TSan what happened with
// its mutex annotation interface. Waits (Await, CondVar::Wait) release and
// re-acquire the mutex inside the library; they are annotated as an unlock
// before and a lock after. Memory accesses inside an annotated operation are
// ignored by TSan, so a waiter's condition evaluated inside Unlock does not
// count as a race.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/synchronization/mutex.h"

// TSan's dynamic annotations (exported by libtsan).
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);

namespace {

#define AEVATAR_STRINGIFY_INNER(x) #x
#define AEVATAR_STRINGIFY(x) AEVATAR_STRINGIFY_INNER(x)

// The library's definition of the symbol this wrapper interposes, by its
// mangled name after `absl::<inline namespace>::` (e.g. "5Mutex4LockEv").
template <typename Fn>
Fn Next(const char* member) {
  const std::string inline_namespace = AEVATAR_STRINGIFY(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string mangled =
      "_ZN4absl" + std::to_string(inline_namespace.size()) + inline_namespace + member;
  void* symbol = dlsym(RTLD_NEXT, mangled.c_str());
  if (symbol == nullptr) {
    std::fprintf(stderr, "absl_mutex_annotations: %s not found\n", mangled.c_str());
    std::abort();
  }
  return reinterpret_cast<Fn>(symbol);
}

// Abseil's entry points call each other (AwaitWithTimeout calls
// AwaitWithDeadline, LockWhen may call Lock): only the outermost call of a
// thread annotates.
thread_local int nesting = 0;

class Outermost {
 public:
  Outermost() : outermost_(nesting++ == 0) {}
  ~Outermost() { --nesting; }
  explicit operator bool() const { return outermost_; }

 private:
  bool outermost_;
};

// Annotates `mu` as released for a wait and re-acquired after it. The wait
// evaluates the caller's condition while the library holds the mutex, which
// TSan cannot see: reads during the wait are ignored (the condition only
// reads), and the re-acquisition orders everything after it.
class WaitAnnotation {
 public:
  WaitAnnotation(void* mu, unsigned flags) : mu_(mu), flags_(flags) {
    if (!outermost_) return;
    __tsan_mutex_pre_unlock(mu_, flags_);
    __tsan_mutex_post_unlock(mu_, flags_);
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  }
  ~WaitAnnotation() {
    if (!outermost_) return;
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    __tsan_mutex_pre_lock(mu_, flags_);
    __tsan_mutex_post_lock(mu_, flags_, 0);
  }

 private:
  Outermost outermost_;
  void* mu_;
  unsigned flags_;
};

// Annotates a lock (or unlock) around the library call, when outermost.
class LockAnnotation {
 public:
  LockAnnotation(void* mu, unsigned flags, bool unlock) : mu_(mu), flags_(flags), unlock_(unlock) {
    if (!outermost_) return;
    if (unlock_) {
      __tsan_mutex_pre_unlock(mu_, flags_);
    } else {
      __tsan_mutex_pre_lock(mu_, flags_);
    }
  }
  // For a try-lock: whether it failed, reported in the post annotation.
  void set_failed() { flags_ |= __tsan_mutex_try_lock_failed; }
  ~LockAnnotation() {
    if (!outermost_) return;
    if (unlock_) {
      __tsan_mutex_post_unlock(mu_, flags_);
    } else {
      __tsan_mutex_post_lock(mu_, flags_, 0);
    }
  }

 private:
  Outermost outermost_;
  void* mu_;
  unsigned flags_;
  bool unlock_;
};

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static auto next = Next<void (*)(Mutex*)>("5Mutex4LockEv");
  LockAnnotation annotation(this, 0, /*unlock=*/false);
  next(this);
}

void Mutex::ReaderLock() {
  static auto next = Next<void (*)(Mutex*)>("5Mutex10ReaderLockEv");
  LockAnnotation annotation(this, __tsan_mutex_read_lock, /*unlock=*/false);
  next(this);
}

bool Mutex::TryLock() {
  static auto next = Next<bool (*)(Mutex*)>("5Mutex7TryLockEv");
  LockAnnotation annotation(this, __tsan_mutex_try_lock, /*unlock=*/false);
  bool locked = next(this);
  if (!locked) annotation.set_failed();
  return locked;
}

void Mutex::Unlock() {
  static auto next = Next<void (*)(Mutex*)>("5Mutex6UnlockEv");
  LockAnnotation annotation(this, 0, /*unlock=*/true);
  next(this);
}

void Mutex::ReaderUnlock() {
  static auto next = Next<void (*)(Mutex*)>("5Mutex12ReaderUnlockEv");
  LockAnnotation annotation(this, __tsan_mutex_read_lock, /*unlock=*/true);
  next(this);
}

void Mutex::LockWhen(const Condition& cond) {
  static auto next = Next<void (*)(Mutex*, const Condition&)>("5Mutex8LockWhenERKNS0_9ConditionE");
  LockAnnotation annotation(this, 0, /*unlock=*/false);
  next(this, cond);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  static auto next = Next<bool (*)(Mutex*, const Condition&, Duration)>(
      "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  LockAnnotation annotation(this, 0, /*unlock=*/false);
  return next(this, cond, timeout);
}

void Mutex::Await(const Condition& cond) {
  static auto next = Next<void (*)(Mutex*, const Condition&)>("5Mutex5AwaitERKNS0_9ConditionE");
  WaitAnnotation wait(this, 0);
  next(this, cond);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  static auto next = Next<bool (*)(Mutex*, const Condition&, Duration)>(
      "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  WaitAnnotation wait(this, 0);
  return next(this, cond, timeout);
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  static auto next = Next<bool (*)(Mutex*, const Condition&, Time)>(
      "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  WaitAnnotation wait(this, 0);
  return next(this, cond, deadline);
}

void CondVar::Wait(Mutex* mu) {
  static auto next = Next<void (*)(CondVar*, Mutex*)>("7CondVar4WaitEPNS0_5MutexE");
  WaitAnnotation wait(mu, 0);
  next(this, mu);
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  static auto next = Next<bool (*)(CondVar*, Mutex*, Duration)>(
      "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  WaitAnnotation wait(mu, 0);
  return next(this, mu, timeout);
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  static auto next =
      Next<bool (*)(CondVar*, Mutex*, Time)>("7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  WaitAnnotation wait(mu, 0);
  return next(this, mu, deadline);
}

ABSL_NAMESPACE_END
}  // namespace absl
