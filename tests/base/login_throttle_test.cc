// LoginThrottle on a test clock: free failures, exponential locks, per
// account and per source, forgetting, success, bounded memory and bounded
// concurrent hashing.
#include "base/login_throttle.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

class LoginThrottleTest : public ::testing::Test {
 protected:
  LoginThrottle Make(LoginThrottleOptions options = {}) {
    return LoginThrottle(options, [this] { return now_.load(); });
  }
  std::atomic<int64_t> now_{1'000'000};
};

TEST_F(LoginThrottleTest, AfterFiveFreeFailuresAnAccountIsLockedExponentiallyLonger) {
  LoginThrottle throttle = Make();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(throttle.RetryAfterMs("alice", "10.0.0.1"), 0);
    throttle.RecordFailure("alice", "10.0.0.1");
  }
  EXPECT_EQ(throttle.RetryAfterMs("alice", "10.0.0.1"), 0);
  for (int64_t expected : {1000, 2000, 4000, 8000}) {
    throttle.RecordFailure("alice", "10.0.0.1");
    EXPECT_EQ(throttle.RetryAfterMs("alice", "10.0.0.1"), expected);
    // From another address too: the account itself is locked.
    EXPECT_EQ(throttle.RetryAfterMs("alice", "10.0.0.2"), expected);
    now_ += expected;
    EXPECT_EQ(throttle.RetryAfterMs("alice", "10.0.0.1"), 0);
  }
  EXPECT_EQ(throttle.RetryAfterMs("bob", "10.0.0.2"), 0);
}

TEST_F(LoginThrottleTest, LocksAreCappedForgottenAndClearedBySuccess) {
  LoginThrottleOptions options;
  options.max_delay = std::chrono::seconds(5);
  LoginThrottle throttle = Make(options);
  for (int i = 0; i < 40; ++i) throttle.RecordFailure("alice", "s" + std::to_string(i));
  EXPECT_EQ(throttle.RetryAfterMs("alice", "x"), 5000);
  throttle.RecordSuccess("alice");
  EXPECT_EQ(throttle.RetryAfterMs("alice", "x"), 0);

  for (int i = 0; i < 6; ++i) throttle.RecordFailure("bob", "s" + std::to_string(i));
  EXPECT_GT(throttle.RetryAfterMs("bob", "x"), 0);
  now_ += 15 * 60 * 1000;  // quiet for the forget window: it starts over
  throttle.RecordFailure("bob", "y");
  EXPECT_EQ(throttle.RetryAfterMs("bob", "y"), 0);
}

TEST_F(LoginThrottleTest, ASourceGuessingManyNamesIsLockedAfterTwentyFailures) {
  LoginThrottle throttle = Make();
  for (int i = 0; i < 20; ++i) throttle.RecordFailure("user" + std::to_string(i), "10.0.0.9");
  EXPECT_EQ(throttle.RetryAfterMs("fresh-name", "10.0.0.9"), 0);
  throttle.RecordFailure("user20", "10.0.0.9");
  EXPECT_EQ(throttle.RetryAfterMs("fresh-name", "10.0.0.9"), 1000);
  EXPECT_EQ(throttle.RetryAfterMs("fresh-name", "10.0.0.8"), 0);
  // The attacker's own good login does not reset the address.
  throttle.RecordSuccess("user0");
  EXPECT_EQ(throttle.RetryAfterMs("fresh-name", "10.0.0.9"), 1000);
}

TEST_F(LoginThrottleTest, TracksAtMostMaxKeysYetKeepsTheLockedOnes) {
  LoginThrottleOptions options;
  options.max_keys = 100;
  LoginThrottle throttle = Make(options);
  for (int i = 0; i < 9; ++i) throttle.RecordFailure("victim", "a");
  EXPECT_EQ(throttle.RetryAfterMs("victim", "z"), 8000);
  for (int i = 0; i < 1000; ++i) {
    now_ += 1;
    throttle.RecordFailure("name" + std::to_string(i), "src" + std::to_string(i));
    ASSERT_LE(throttle.tracked_keys(), options.max_keys + 2) << i;
  }
  // Flooding other names did not unlock the account under attack.
  EXPECT_EQ(throttle.RetryAfterMs("victim", "z"), 7000);
}

TEST_F(LoginThrottleTest, AtMostTheConfiguredNumberOfHashesRunAtOnce) {
  LoginThrottleOptions two;
  two.max_concurrent_hashes = 2;
  LoginThrottle throttle = Make(two);
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      LoginThrottle::HashSlot slot(throttle);
      const int now_inside = ++inside;
      int seen = most.load();
      while (now_inside > seen && !most.compare_exchange_weak(seen, now_inside)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      --inside;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(most.load(), 2);
  EXPECT_GE(DefaultHashConcurrency(), 1);
}

TEST_F(LoginThrottleTest, BeginCountsEachAttemptSoABurstCannotPassTheFreeLimit) {
  LoginThrottle throttle = Make();
  // 30 attempts arrive together from one address, each for another name,
  // before any of them is decided: 20 free ones and the one that locks.
  int admitted = 0;
  for (int i = 0; i < 30; ++i)
    admitted += throttle.Begin("name" + std::to_string(i), "10.0.0.9") == 0;
  EXPECT_EQ(admitted, 21);
  EXPECT_EQ(throttle.Begin("late", "10.0.0.9"), 1000);
  // A right password takes its own count back, for the address only once.
  now_ += 1000;
  ASSERT_EQ(throttle.Begin("carol", "10.0.0.7"), 0);
  throttle.Succeeded("carol", "10.0.0.7");
  for (int i = 0; i < 20; ++i) EXPECT_EQ(throttle.Begin("c" + std::to_string(i), "10.0.0.7"), 0);
}

}  // namespace
}  // namespace aevatar::base
