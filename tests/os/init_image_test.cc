#include "os/init_image.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "os/init_spawn.h"

namespace aevatar::os {
namespace {

// The image is mapped page-aligned in the init; a vector of max_align_t
// gives the test the same alignment.
std::vector<std::max_align_t> Aligned(const std::string& bytes) {
  std::vector<std::max_align_t> buffer(bytes.size() / sizeof(std::max_align_t) + 1);
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

TEST(InitImage, CarriesEveryFieldOfThePlanAcrossTheExec) {
  const char file_bytes[] = {'a', '\0', 'b'};  // contents may hold NUL bytes
  const FsStep steps[] = {
      {.kind = FsStep::Kind::kMount,
       .path = "/r/tmp",
       .source = "tmpfs",
       .fstype = "tmpfs",
       .flags = 6,
       .data = "size=1m,mode=1777"},
      {.kind = FsStep::Kind::kWriteFile,
       .path = "/r/w/main.py",
       .data = file_bytes,
       .data_len = sizeof(file_bytes),
       .mode = 0644},
  };
  const ChildRlimit rlimits[] = {{RLIMIT_NOFILE, 64, 128}};
  char arg0[] = "/usr/bin/python3", arg1[] = "-I", env0[] = "LANG=C.UTF-8";
  char* argv[] = {arg0, arg1, nullptr};
  char* envp[] = {env0, nullptr};
  const ChildStage stages[] = {{"/usr/bin/python3", argv, envp}};
  sock_filter filters[] = {{0x06, 0, 0, 0x7fff0000}};
  const sock_fprog seccomp{1, filters};
  ChildPlan plan{};
  plan.root_mount_point = "/r";
  plan.root_mount_options = "size=2m";
  plan.old_root_name = ".old";
  plan.fs_steps = steps;
  plan.fs_step_count = 2;
  plan.hostname = "sandbox";
  plan.workdir = "/workspace";
  plan.uid = 65534;
  plan.rlimits = rlimits;
  plan.rlimit_count = 1;
  plan.stages = stages;
  plan.stage_count = 1;
  plan.seccomp = &seccomp;
  plan.loopback_up = true;
  plan.stdout_fd = 42;  // ignored: the image names the fixed numbers

  const std::string bytes = WriteInitImage(plan);
  auto buffer = Aligned(bytes);
  ChildPlan* read = ReadInitImage(buffer.data(), bytes.size());
  ASSERT_NE(read, nullptr);
  EXPECT_STREQ(read->root_mount_point, "/r");
  EXPECT_STREQ(read->root_mount_options, "size=2m");
  EXPECT_STREQ(read->hostname, "sandbox");
  EXPECT_EQ(read->uid, 65534u);
  EXPECT_TRUE(read->loopback_up);
  EXPECT_EQ(read->stdout_fd, kInitStdoutFd);
  EXPECT_EQ(read->handoff_fd, kInitHandoffFd);
  ASSERT_EQ(read->fs_step_count, 2u);
  EXPECT_STREQ(read->fs_steps[0].data, "size=1m,mode=1777");
  EXPECT_STREQ(read->fs_steps[0].fstype, "tmpfs");
  EXPECT_EQ(read->fs_steps[0].flags, 6u);
  EXPECT_EQ(read->fs_steps[0].source[0], 't');
  ASSERT_EQ(read->fs_steps[1].data_len, sizeof(file_bytes));
  EXPECT_EQ(std::memcmp(read->fs_steps[1].data, file_bytes, sizeof(file_bytes)), 0);
  EXPECT_EQ(read->fs_steps[1].source, nullptr);
  EXPECT_EQ(read->rlimits[0].hard, 128u);
  ASSERT_EQ(read->stage_count, 1u);
  EXPECT_STREQ(read->stages[0].argv[1], "-I");
  EXPECT_EQ(read->stages[0].argv[2], nullptr);
  EXPECT_STREQ(read->stages[0].envp[0], "LANG=C.UTF-8");
  ASSERT_EQ(read->seccomp->len, 1);
  EXPECT_EQ(read->seccomp->filter[0].k, 0x7fff0000u);
}

TEST(InitImage, RejectsAnImageWhoseOffsetsPointOutside) {
  ChildPlan plan{};
  const sock_fprog seccomp{0, nullptr};
  plan.hostname = "sandbox";
  plan.seccomp = &seccomp;
  std::string bytes = WriteInitImage(plan);
  auto buffer = Aligned(bytes);
  reinterpret_cast<ChildPlan*>(buffer.data())->hostname =
      reinterpret_cast<const char*>(uintptr_t{bytes.size() + 64});
  EXPECT_EQ(ReadInitImage(buffer.data(), bytes.size()), nullptr);
  EXPECT_EQ(ReadInitImage(buffer.data(), sizeof(ChildPlan) - 1), nullptr);  // truncated
}

// The init runs as root in every sandbox: only a file nobody but root can
// replace, in a directory nobody but root can change, is accepted.
TEST(InitExecutable, MustBeARootOwnedFileOnlyRootCanReplace) {
  char dir_template[] = "/tmp/init-exe-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);  // 0700, root's
  const std::string dir = dir_template;
  const std::string path = dir + "/chrono-sandbox-init";
  std::ofstream(path) << "#";
  ::chmod(path.c_str(), 0755);
  EXPECT_TRUE(OpenInitExecutable(path).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(OpenInitExecutable("chrono-sandbox-init").status()));
  ::chmod(path.c_str(), 0775);  // group root may write (umask 002): still only root
  EXPECT_TRUE(OpenInitExecutable(path).ok());
  ASSERT_EQ(::chown(path.c_str(), 0, 65534), 0);  // ... but not another group
  EXPECT_TRUE(absl::IsFailedPrecondition(OpenInitExecutable(path).status()));
  ::chmod(path.c_str(), 0757);
  ASSERT_EQ(::chown(path.c_str(), 0, 0), 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(OpenInitExecutable(path).status()));
  ::chmod(path.c_str(), 0755);
  ASSERT_EQ(::chown(path.c_str(), 65534, 0), 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(OpenInitExecutable(path).status()));
  ASSERT_EQ(::chown(path.c_str(), 0, 0), 0);
  const std::string link = dir + "/link";
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  EXPECT_FALSE(OpenInitExecutable(link).ok());  // a symlink is refused
  ::chmod(dir.c_str(), 0777);
  EXPECT_TRUE(absl::IsFailedPrecondition(OpenInitExecutable(path).status()));
  ::unlink(link.c_str());
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
  EXPECT_FALSE(OpenInitExecutable(path).ok());  // missing: fail closed
  auto built = DefaultInitExecutablePath();
  ASSERT_TRUE(built.ok());
  EXPECT_TRUE(OpenInitExecutable(*built).ok());  // built beside the tests
}

}  // namespace
}  // namespace aevatar::os
