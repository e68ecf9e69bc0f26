// ReadyPool: items made ahead on the pool's own thread, taken without
// waiting, a failed make retried later, and the thread stopped before the
// items left in the pool go. Run under ThreadSanitizer too (label tsan).
#include "sandbox/ready_pool.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::sandbox {
namespace {

struct Item {
  int serial;
  std::thread::id made_on;
};

TEST(ReadyPool, KeepsItsTargetMadeOnItsOwnThreadAndRefillsWhatIsTaken) {
  std::atomic<int> made{0};
  ReadyPool<Item> pool(2, [&]() -> absl::StatusOr<std::unique_ptr<Item>> {
    return std::make_unique<Item>(Item{made++, std::this_thread::get_id()});
  });
  ASSERT_TRUE(testing::PollUntil([&] { return pool.ready() == 2; }));
  EXPECT_EQ(made.load(), 2);  // no more than the target

  std::unique_ptr<Item> first = pool.Take();
  ASSERT_NE(first, nullptr);
  EXPECT_NE(first->made_on, std::this_thread::get_id());
  ASSERT_TRUE(testing::PollUntil([&] { return pool.ready() == 2; }));
  EXPECT_EQ(made.load(), 3);
  EXPECT_EQ(pool.failures(), 0u);
}

TEST(ReadyPool, TakeNeverWaitsForAMakeInProgress) {
  absl::Mutex mu;
  bool released = false;
  ReadyPool<Item> pool(1, [&]() -> absl::StatusOr<std::unique_ptr<Item>> {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&released));
    return std::make_unique<Item>(Item{0, std::this_thread::get_id()});
  });
  // The make is blocked: Take answers at once, on a thread the test bounds.
  auto taken = std::async(std::launch::async, [&] { return pool.Take() == nullptr; });
  ASSERT_EQ(taken.wait_for(testing::kHangGuard), std::future_status::ready) << "Take waited";
  EXPECT_TRUE(taken.get());
  absl::MutexLock lock(&mu);
  released = true;
}

TEST(ReadyPool, EveryItemMadeIsTakenOnceOrStillReady) {
  std::atomic<int> made{0};
  ReadyPool<Item> pool(4, [&]() -> absl::StatusOr<std::unique_ptr<Item>> {
    return std::make_unique<Item>(Item{made++, std::this_thread::get_id()});
  });
  absl::Mutex taken_mu;
  std::multiset<int> taken;
  std::vector<std::thread> takers;
  // Four takers at once, each until it has three items (or the hang guard).
  const auto give_up = std::chrono::steady_clock::now() + testing::kHangGuard;
  for (int t = 0; t < 4; ++t) {
    takers.emplace_back([&] {
      for (int mine = 0; mine < 3 && std::chrono::steady_clock::now() < give_up;) {
        if (std::unique_ptr<Item> item = pool.Take()) {
          absl::MutexLock lock(&taken_mu);
          taken.insert(item->serial);
          ++mine;
        }
        std::this_thread::yield();
      }
    });
  }
  for (std::thread& taker : takers) taker.join();
  ASSERT_TRUE(testing::PollUntil([&] { return pool.ready() == 4; }));
  absl::MutexLock lock(&taken_mu);
  EXPECT_EQ(taken.size(), 12u);
  // No item lost or made beyond the target: the ones taken plus the ones
  // ready are all that were made, each taken at most once.
  EXPECT_EQ(taken.size() + pool.ready(), static_cast<size_t>(made.load()));
  for (int serial : taken) EXPECT_EQ(taken.count(serial), 1u) << serial;
}

TEST(ReadyPool, AFailedMakeIsCountedAndRetriedLater) {
  std::atomic<int> calls{0};
  ReadyPool<Item> pool(
      1,
      [&]() -> absl::StatusOr<std::unique_ptr<Item>> {
        if (calls++ < 2) return absl::InternalError("not yet");
        return std::make_unique<Item>(Item{0, std::this_thread::get_id()});
      },
      absl::Milliseconds(10));
  ASSERT_TRUE(testing::PollUntil([&] { return pool.ready() == 1; }));
  EXPECT_EQ(pool.failures(), 2u);
  EXPECT_EQ(calls.load(), 3);
}

TEST(ReadyPool, StoppingWhileAMakeFailsRepeatedlyDoesNotWaitOutTheRetry) {
  const auto start = std::chrono::steady_clock::now();
  {
    ReadyPool<Item> pool(
        1, []() -> absl::StatusOr<std::unique_ptr<Item>> { return absl::InternalError("never"); },
        absl::Hours(1));
    ASSERT_TRUE(testing::PollUntil([&] { return pool.failures() >= 1; }));
  }
  // Property, not timing: an hour's retry wait was cut short by the stop.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(1));
}

}  // namespace
}  // namespace aevatar::sandbox
