#include "os/cgroup_pool.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace aevatar::os {
namespace {

TEST(CgroupUsageDelta, DiffsCumulativeCountersAndKeepsThePeak) {
  CgroupUsage before{1000, 50, 2, 7};
  CgroupUsage after{4000, 80, 3, 7};
  CgroupUsage delta = CgroupUsageDelta(before, after);
  EXPECT_EQ(delta.cpu_ns, 3000u);
  EXPECT_EQ(delta.memory_peak_bytes, 80u);
  EXPECT_EQ(delta.oom_kills, 1u);
  EXPECT_EQ(delta.pids_max_events, 0u);
  EXPECT_EQ(CgroupUsageDelta(after, before).cpu_ns, 0u);  // never wraps
}

// Needs root and a cgroup hierarchy (the machines this project runs on).
TEST(CgroupPool, ReusesAnEmptyCgroupWithTheNewLimits) {
  auto manager = DetectCgroupManager("chrono-sandbox");
  ASSERT_TRUE(manager.ok()) << manager.status();
  CgroupPool pool(manager->get(), "run-" + std::to_string(::getpid()) + "-pooltest-", 2);
  auto first = pool.Take({64ull << 20, 16, 100});
  ASSERT_TRUE(first.ok()) << first.status();
  const std::vector<std::string> files = (*first)->ProcsFiles();
  pool.GiveBack(std::move(*first));
  auto second = pool.Take({1ull << 30, 64, 100});  // raising the limits must work too
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->ProcsFiles(), files);  // the same cgroup, recycled
  EXPECT_TRUE((*second)->IsEmpty());
}

}  // namespace
}  // namespace aevatar::os
