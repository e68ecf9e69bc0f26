// ReusableThreads: tasks run on threads of their own, reused when idle.
#include "base/reusable_threads.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::base {
namespace {

using aevatar::testing::PollUntil;

TEST(ReusableThreads, AFinishedTasksThreadRunsTheNextTask) {
  auto* threads = new ReusableThreads(absl::Seconds(30));  // leaked, as the class asks
  // The ids are handed over under a mutex: a Notification already notified
  // returns through an atomic load in Debian's uninstrumented Abseil, which
  // ThreadSanitizer cannot see as the synchronisation it is.
  absl::Mutex mu;
  std::thread::id first_id;
  std::thread::id second_id;
  absl::Notification first_done;
  absl::Notification second_done;
  threads->Run([&] {
    absl::MutexLock lock(&mu);
    first_id = std::this_thread::get_id();
    first_done.Notify();
  });
  first_done.WaitForNotification();
  ASSERT_TRUE(PollUntil([&] { return threads->idle() == 1; }));
  threads->Run([&] {
    absl::MutexLock lock(&mu);
    second_id = std::this_thread::get_id();
    second_done.Notify();
  });
  second_done.WaitForNotification();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(second_id, first_id);
  EXPECT_NE(second_id, std::this_thread::get_id());
}

TEST(ReusableThreads, ABlockedTaskNeverHoldsUpAnother) {
  auto* threads = new ReusableThreads(absl::Seconds(30));
  absl::Notification release;
  absl::Notification second_ran;
  threads->Run([&] { release.WaitForNotification(); });
  threads->Run([&] { second_ran.Notify(); });
  // Only a second thread can run it while the first task blocks.
  EXPECT_TRUE(second_ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(threads->alive(), 2);
  release.Notify();
  EXPECT_TRUE(PollUntil([&] { return threads->idle() == 2; }));
}

TEST(ReusableThreads, IdleThreadsEndAfterTheirTimeout) {
  auto* threads = new ReusableThreads(absl::Milliseconds(50));
  std::atomic<int> ran{0};
  for (int i = 0; i < 3; ++i) threads->Run([&] { ++ran; });
  ASSERT_TRUE(PollUntil([&] { return ran.load() == 3; }));
  // Run counted each thread it started, so this holds only once they ended.
  EXPECT_TRUE(PollUntil([&] { return threads->alive() == 0; }));
  EXPECT_EQ(threads->idle(), 0);
  // Still usable afterwards: a new thread starts.
  absl::Notification later;
  threads->Run([&] { later.Notify(); });
  EXPECT_TRUE(later.WaitForNotificationWithTimeout(absl::Seconds(30)));
}

}  // namespace
}  // namespace aevatar::base
