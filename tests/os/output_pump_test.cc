#include "os/output_pump.h"

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"
#include "os/process.h"
#include "os/unique_fd.h"
#include "testing/poll.h"
#include "testing/proc_file.h"

namespace aevatar::os {
namespace {

using std::chrono::steady_clock;

struct Spawned {
  Pipe out, err;
  std::optional<ChildProcess> child;
};

Spawned SpawnShell(const std::string& script) {
  Spawned s;
  s.out = *MakePipe();
  s.err = *MakePipe();
  auto child = SpawnProgram({"/bin/sh", "-c", script}, {"PATH=/usr/bin:/bin"}, -1,
                            s.out.write_end.get(), s.err.write_end.get());
  EXPECT_TRUE(child.ok()) << child.status();
  s.child.emplace(std::move(*child));
  s.out.write_end.reset();
  s.err.write_end.reset();
  EXPECT_TRUE(SetNonBlocking(s.out.read_end.get()).ok());
  EXPECT_TRUE(SetNonBlocking(s.err.read_end.get()).ok());
  return s;
}

TEST(OutputPump, CollectsBothStreamsUntilExit) {
  Spawned s = SpawnShell("echo out; echo err >&2");
  PumpOptions options;
  options.deadline = steady_clock::now() + std::chrono::seconds(10);
  auto result = PumpOutput(s.out.read_end.get(), s.err.read_end.get(), *s.child, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->out.data, "out\n");
  EXPECT_EQ(result->err.data, "err\n");
  EXPECT_EQ(result->end, PumpEnd::kExited);
}

TEST(OutputPump, CapsEachStreamAndCountsTheRest) {
  Spawned s = SpawnShell("head -c 100000 /dev/zero");
  PumpOptions options;
  options.deadline = steady_clock::now() + std::chrono::seconds(10);
  options.max_bytes_per_stream = 1000;
  auto result = PumpOutput(s.out.read_end.get(), s.err.read_end.get(), *s.child, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->out.data.size(), 1000u);
  EXPECT_TRUE(result->out.truncated);
  EXPECT_EQ(result->out.total_bytes, 100000u);
}

// Waits until `pid` has exec'd a program whose argv[0] is `argv0`; false
// after the hang guard.
bool WaitForExec(pid_t pid, const std::string& argv0) {
  const std::string path = "/proc/" + std::to_string(pid) + "/cmdline";
  return aevatar::testing::PollUntil([&] {
    const std::string cmdline = aevatar::testing::ReadProcFile(path);
    return cmdline.rfind(argv0 + '\0', 0) == 0;
  });
}

TEST(OutputPump, KillsTheChildAtTheDeadline) {
  Spawned s = SpawnShell("echo before; exec sleep 30");
  // Once the shell has exec'd sleep, "before" is in the pipe: the deadline
  // cannot come before the output, however slow the machine.
  ASSERT_TRUE(WaitForExec(s.child->pid(), "sleep"));
  PumpOptions options;
  options.deadline = steady_clock::now() + std::chrono::milliseconds(300);
  const auto start = steady_clock::now();
  auto result = PumpOutput(s.out.read_end.get(), s.err.read_end.get(), *s.child, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->end, PumpEnd::kDeadline);
  EXPECT_EQ(result->out.data, "before\n");
  // Killed at the deadline, not when the 30 s sleep would have ended.
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(20));
  auto status = s.child->Wait();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(*status & 0x7f, SIGKILL);
}

TEST(OutputPump, CancelFdKillsTheChild) {
  Spawned s = SpawnShell("exec sleep 30");
  Pipe cancel = *MakePipe();
  ASSERT_EQ(::write(cancel.write_end.get(), "x", 1), 1);
  PumpOptions options;
  options.deadline = steady_clock::now() + std::chrono::seconds(30);
  options.cancel_fd = cancel.read_end.get();
  auto result = PumpOutput(s.out.read_end.get(), s.err.read_end.get(), *s.child, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->end, PumpEnd::kCancelled);
}

}  // namespace
}  // namespace aevatar::os
