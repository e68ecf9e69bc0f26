#include "os/cgroup_files.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace aevatar::os::cgroup_files {
namespace {

class CgroupFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cgroup_files_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(CgroupFilesTest, ReadsKeyedValuesAndMissingKeysAsZero) {
  std::string path = Write("memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 1\n");
  OpenFiles files;
  EXPECT_EQ(*files.ReadKeyed(path, "oom_kill"), 1u);
  EXPECT_EQ(*files.ReadKeyed(path, "max"), 4u);
  EXPECT_EQ(*files.ReadKeyed(path, "absent"), 0u);
}

TEST_F(CgroupFilesTest, ReadsNumbersWithTrailingNewline) {
  OpenFiles files;
  EXPECT_EQ(*files.ReadNumber(Write("usage", "123456789\n")), 123456789u);
  EXPECT_FALSE(files.ReadNumber(Write("bad", "max\n")).ok());
}

// A kept file is read again from its start: the caller sees the value now.
TEST_F(CgroupFilesTest, AKeptFileIsReadAfreshEachTime) {
  const std::string path = Write("cpuacct.usage", "100\n");
  OpenFiles files;
  EXPECT_EQ(*files.ReadNumber(path), 100u);
  ASSERT_TRUE(files.Write(path, "250\n").ok());
  EXPECT_EQ(*files.ReadNumber(path), 250u);
}

TEST_F(CgroupFilesTest, MissingFileIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(ReadFile(dir_ + "/nope").status()));
}

TEST(CgroupMounts, ListsTheHostsCgroupMounts) {
  auto mounts = ListCgroupMounts();
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  ASSERT_FALSE(mounts->empty());
  for (const auto& mount : *mounts) {
    EXPECT_TRUE(mount.fstype == "cgroup" || mount.fstype == "cgroup2");
    EXPECT_EQ(mount.mount_point.front(), '/');
  }
}

}  // namespace
}  // namespace aevatar::os::cgroup_files

namespace aevatar::os::cgroup_files {
namespace {

TEST_F(CgroupFilesTest, RemovesOnlyRunDirsOfDeadProcesses) {
  const std::string dead = dir_ + "/run-2147483646-3";  // no such pid
  const std::string alive = dir_ + "/run-" + std::to_string(::getpid()) + "-0";
  const std::string other = dir_ + "/gvisor-2147483646-1";
  for (const std::string& d : {dead, alive, other}) ASSERT_TRUE(MakeDir(d).ok());
  EXPECT_EQ(RemoveStaleRunDirs(dir_, "run-"), 1);
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(alive));
  EXPECT_TRUE(std::filesystem::exists(other));
}

}  // namespace
}  // namespace aevatar::os::cgroup_files
