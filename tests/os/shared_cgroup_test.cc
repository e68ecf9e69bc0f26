#include "os/shared_cgroup.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace aevatar::os {
namespace {

std::string DirectoryOf(const std::string& file) { return file.substr(0, file.rfind('/')); }

// Needs root and a cgroup hierarchy (the machines this project runs on).
class SharedCgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto detected = DetectCgroupManager("chrono-sandbox");
    ASSERT_TRUE(detected.ok()) << detected.status();
    manager_ = std::move(*detected);
  }
  // Slots outlive their holders by design; the test removes its own.
  void TearDown() override {
    for (int n = 0; n < 2; ++n) {
      auto cgroup = manager_->CreateUnlimited(prefix_ + std::to_string(n));
      if (cgroup.ok()) (void)(*cgroup)->Destroy();
    }
  }

  std::unique_ptr<CgroupManager> manager_;
  const std::string prefix_ = "shared-test-" + std::to_string(::getpid()) + "-";
};

TEST_F(SharedCgroupTest, AHeldSlotIsSkippedAndAReleasedOneIsReusedInPlace) {
  auto first = ClaimSharedCgroup(*manager_, prefix_, 2);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = ClaimSharedCgroup(*manager_, prefix_, 2);
  ASSERT_TRUE(second.ok()) << second.status();
  const std::string first_dir = DirectoryOf((*first)->ProcsFiles().front());
  EXPECT_NE(first_dir, DirectoryOf((*second)->ProcsFiles().front()));

  EXPECT_TRUE(absl::IsResourceExhausted(ClaimSharedCgroup(*manager_, prefix_, 2).status()));

  first->reset();  // released, not removed
  EXPECT_TRUE(std::filesystem::is_directory(first_dir));
  auto again = ClaimSharedCgroup(*manager_, prefix_, 2);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(DirectoryOf((*again)->ProcsFiles().front()), first_dir);
  EXPECT_TRUE((*again)->IsEmpty());
  EXPECT_TRUE((*again)->SetLimits({64ull << 20, 16, 100}).ok());
}

}  // namespace
}  // namespace aevatar::os
