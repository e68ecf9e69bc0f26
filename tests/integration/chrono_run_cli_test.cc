// `chrono-sandbox run` from the shell: the real binary as a subprocess, held to
// its CLI contract. Without --json the program's stdout and stderr pass
// through and its exit code becomes the CLI's (128+signal when signalled, 124
// on wall timeout); with --json one object describes the run and the CLI exits
// 0; bad arguments exit 2 with a message and run nothing. The CLI's own
// environment never reaches the program, and a one-shot run leaves no cgroup
// behind.
//
// Arguments go to the binary as an argv vector (posix_spawn), never through a
// shell, so sources are passed byte for byte.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "service_process.h"

extern char** environ;

namespace aevatar::testing {
namespace {

// Printed by every program that a bad-argument case must not run.
constexpr char kRanMarker[] = "RAN-MARKER-7f3a";
// Planted in the CLI's own environment; must never reach the program.
constexpr char kPlantedSecret[] = "s3cr3t-chrono-cli-5d41402abc4b2a76";
// A runaway CLI is killed after this long, so a hang fails instead of blocking.
constexpr auto kCliDeadline = std::chrono::seconds(30);

struct CliRun {
  pid_t pid = -1;
  int wait_status = -1;
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
  // Run cgroups named after this CLI's pid, seen right after it exited.
  std::vector<std::string> leftover_cgroups;

  bool exited() const { return WIFEXITED(wait_status); }
  // The CLI's exit code, or -1 when it did not exit normally.
  int exit_code() const { return exited() ? WEXITSTATUS(wait_status) : -1; }
  std::string Describe() const {
    return "exit_code=" + std::to_string(exit_code()) + "\nstdout:\n" + out + "\nstderr:\n" + err;
  }
};

// Names of the entries of `dir`; empty when it does not exist.
std::vector<std::string> ListDir(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  return names;
}

// Paths of run cgroups `run-<pid>-*` under any chrono-sandbox parent, on
// cgroup v2 (/sys/fs/cgroup/chrono-sandbox) and v1 (/sys/fs/cgroup/*/chrono-sandbox).
std::vector<std::string> RunCgroupsOf(pid_t pid) {
  const std::filesystem::path root = "/sys/fs/cgroup";
  std::vector<std::filesystem::path> parents = {root / "chrono-sandbox"};
  for (const std::string& hierarchy : ListDir(root)) {
    parents.push_back(root / hierarchy / "chrono-sandbox");
  }
  const std::string prefix = "run-" + std::to_string(pid) + "-";
  std::vector<std::string> found;
  for (const auto& parent : parents) {
    for (const std::string& name : ListDir(parent)) {
      if (name.rfind(prefix, 0) == 0) found.push_back((parent / name).string());
    }
  }
  return found;
}

// The test's environment, plus the planted secrets the program must not see.
std::vector<std::string> CliEnvironment() {
  const std::vector<std::string> planted = {
      std::string("CHRONO_TEST_SECRET=") + kPlantedSecret,
      std::string("NYXID_API_KEY=nyx-") + kPlantedSecret,
  };
  std::vector<std::string> env;
  for (char** var = environ; *var != nullptr; ++var) {
    const std::string entry = *var;
    if (entry.rfind("CHRONO_TEST_SECRET=", 0) == 0 || entry.rfind("NYXID_API_KEY=", 0) == 0) {
      continue;
    }
    env.push_back(entry);
  }
  env.insert(env.end(), planted.begin(), planted.end());
  return env;
}

std::vector<char*> CPointers(std::vector<std::string>& strings) {
  std::vector<char*> ptrs;
  for (std::string& s : strings) ptrs.push_back(s.data());
  ptrs.push_back(nullptr);
  return ptrs;
}

// Runs `chrono-sandbox run <args...>` with stdin from /dev/null, captures its
// stdout and stderr apart and waits for it; checks it left no cgroup.
CliRun RunCli(const std::vector<std::string>& args) {
  CliRun run;
  std::vector<std::string> argv = {BinaryPath("chrono-sandbox"), "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> envp = CliEnvironment();
  std::vector<char*> argv_ptrs = CPointers(argv);
  std::vector<char*> envp_ptrs = CPointers(envp);

  int out[2];
  int err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return run;
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return run;
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  ::posix_spawn_file_actions_adddup2(&actions, err[1], 2);

  const auto start = std::chrono::steady_clock::now();
  const int spawned =
      ::posix_spawn(&run.pid, argv_ptrs[0], &actions, nullptr, argv_ptrs.data(), envp_ptrs.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  if (spawned != 0) {
    run.pid = -1;
    ::close(out[0]);
    ::close(err[0]);
    return run;
  }

  // Drain both pipes together so neither can fill up and stall the CLI.
  struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &run.err};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    if (!killed && std::chrono::steady_clock::now() - start > kCliDeadline) {
      ::kill(run.pid, SIGKILL);
      killed = true;
    }
    if (::poll(fds, 2, 200) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const auto& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }
  while (::waitpid(run.pid, &run.wait_status, 0) < 0 && errno == EINTR) {
  }
  run.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  // Look now: a later CLI's start-up sweeps cgroups of dead pids and would
  // hide a leak. Every test's every run is checked (a test is a process).
  run.leftover_cgroups = RunCgroupsOf(run.pid);
  EXPECT_TRUE(run.leftover_cgroups.empty())
      << "pid " << run.pid << " left " << run.leftover_cgroups.front();
  return run;
}

// Writes `contents` to `dir/name` and returns the path.
std::string WriteFile(const TempDir& dir, const std::string& name, const std::string& contents) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string Join(const std::vector<std::string>& args) {
  std::string joined;
  for (const std::string& arg : args) joined += (joined.empty() ? "" : " ") + arg;
  return joined;
}

// Parses the single JSON object printed by --json; null when it is not one.
nlohmann::json ParseResult(const std::string& out) {
  nlohmann::json parsed = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  return parsed.is_object() ? parsed : nlohmann::json();
}

// What a --json run reported, compared field by field.
struct Outcome {
  std::string verdict;
  int exit_code;
  int signal;
  std::string out;
  std::string err;
};
void ExpectOutcome(const nlohmann::json& result, const Outcome& expected) {
  EXPECT_EQ(result.value("verdict", ""), expected.verdict);
  EXPECT_EQ(result.value("exit_code", -1), expected.exit_code);
  EXPECT_EQ(result.value("signal", -1), expected.signal);
  EXPECT_EQ(result.value("stdout", "?"), expected.out);
  EXPECT_EQ(result.value("stderr", "?"), expected.err);
}

// Checks every field of the --json contract is present with its type.
void ExpectResultShape(const nlohmann::json& result) {
  ASSERT_TRUE(result.is_object());
  for (const char* key : {"exit_code", "signal", "wall_ms", "cpu_ms", "max_rss_kb"}) {
    ASSERT_TRUE(result.contains(key)) << key;
    EXPECT_TRUE(result[key].is_number_integer()) << key << " = " << result[key];
  }
  for (const char* key : {"verdict", "stdout", "stderr"}) {
    ASSERT_TRUE(result.contains(key)) << key;
    EXPECT_TRUE(result[key].is_string()) << key << " = " << result[key];
  }
  for (const char* key : {"stdout_truncated", "stderr_truncated"}) {
    ASSERT_TRUE(result.contains(key)) << key;
    EXPECT_TRUE(result[key].is_boolean()) << key << " = " << result[key];
  }
}

TEST(ChronoRunCli, PassesStdoutAndStderrThroughAndExitsWithTheProgramsCode) {
  CliRun run = RunCli({"--language", "bash", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(run.exit_code(), 3) << run.Describe();
  EXPECT_EQ(run.out, "out\n");
  EXPECT_EQ(run.err, "err\n");
}

TEST(ChronoRunCli, PythonExitCodeBecomesTheClis) {
  CliRun run = RunCli({"--language", "python", "-c", "import sys\nprint('py')\nsys.exit(7)"});
  EXPECT_EQ(run.exit_code(), 7) << run.Describe();
  EXPECT_EQ(run.out, "py\n");
}

TEST(ChronoRunCli, JavascriptAndTypescriptExitCodesBecomeTheClis) {
  CliRun js = RunCli({"--language", "javascript", "-c", "console.log('js'); process.exit(5)"});
  EXPECT_EQ(js.exit_code(), 5) << js.Describe();
  EXPECT_EQ(js.out, "js\n");
  CliRun ts = RunCli({"--language", "typescript", "-c",
                      "const n: number = 6; console.log('ts'); "
                      "process.exit(n);"});
  EXPECT_EQ(ts.exit_code(), 6) << ts.Describe();
  EXPECT_EQ(ts.out, "ts\n");
}

TEST(ChronoRunCli, SignalledProgramExitsWith128PlusSignal) {
  CliRun segv = RunCli({"--language", "bash", "-c", "kill -SEGV $$"});
  EXPECT_EQ(segv.exit_code(), 128 + SIGSEGV) << segv.Describe();
  CliRun term = RunCli({"--language", "bash", "-c", "kill -TERM $$"});
  EXPECT_EQ(term.exit_code(), 128 + SIGTERM) << term.Describe();
}

TEST(ChronoRunCli, WallTimeoutExits124PromptlyWithOutputSoFar) {
  CliRun run =
      RunCli({"--language", "bash", "--timeout-secs", "5", "-c", "echo started; sleep 60"});
  EXPECT_EQ(run.exit_code(), 124) << run.Describe();
  EXPECT_EQ(run.out, "started\n");
  // The program would sleep 60 s; the CLI stops it at the 5 s deadline (the
  // bound leaves any machine's start-up cost out of it).
  EXPECT_LT(run.elapsed, std::chrono::seconds(30)) << run.elapsed.count() << " ms";
}

TEST(ChronoRunCli, JsonDescribesASuccessfulRunAndExitsZero) {
  CliRun run = RunCli({"--language", "bash", "--json", "-c", "echo hi"});
  ASSERT_EQ(run.exit_code(), 0) << run.Describe();
  EXPECT_EQ(run.err, "");
  // One object on one line.
  ASSERT_FALSE(run.out.empty());
  EXPECT_EQ(run.out.find('\n'), run.out.size() - 1) << run.out;
  nlohmann::json result = ParseResult(run.out);
  ExpectResultShape(result);
  ExpectOutcome(result, {"ok", 0, 0, "hi\n", ""});
  EXPECT_FALSE(result.value("stdout_truncated", true));
  EXPECT_FALSE(result.value("stderr_truncated", true));
  EXPECT_GE(result.value("wall_ms", -1), 0);
  EXPECT_GE(result.value("cpu_ms", -1), 0);
  EXPECT_GE(result.value("max_rss_kb", -1), 0);
}

TEST(ChronoRunCli, JsonReportsNonzeroExitWithSeparateStreamsAndExitsZero) {
  CliRun run = RunCli({"--language", "bash", "--json", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_EQ(run.exit_code(), 0) << run.Describe();
  nlohmann::json result = ParseResult(run.out);
  ExpectResultShape(result);
  ExpectOutcome(result, {"nonzero_exit", 3, 0, "out\n", "err\n"});
  // The program's output is in the object, not on the CLI's own streams.
  EXPECT_EQ(run.err, "");
}

TEST(ChronoRunCli, JsonReportsASignalledRunAndExitsZero) {
  CliRun run = RunCli({"--language", "bash", "--json", "-c", "kill -SEGV $$"});
  ASSERT_EQ(run.exit_code(), 0) << run.Describe();
  nlohmann::json result = ParseResult(run.out);
  ExpectResultShape(result);
  ExpectOutcome(result, {"signaled", 128 + SIGSEGV, SIGSEGV, "", ""});
}

TEST(ChronoRunCli, JsonReportsAWallTimeoutAndExitsZero) {
  CliRun run = RunCli({"--language", "bash", "--json", "--timeout-secs", "1", "-c", "sleep 60"});
  ASSERT_EQ(run.exit_code(), 0) << run.Describe();
  EXPECT_LT(run.elapsed, std::chrono::seconds(20)) << run.elapsed.count() << " ms";
  nlohmann::json result = ParseResult(run.out);
  ExpectResultShape(result);
  EXPECT_EQ(result.value("verdict", ""), "wall_timeout");
  EXPECT_GE(result.value("wall_ms", -1), 900);
}

TEST(ChronoRunCli, FileAndStdinFileFeedTheProgram) {
  TempDir dir;
  const std::string source = WriteFile(
      dir, "upper.py", "import sys\nsys.stdout.write(sys.stdin.read().upper())\nsys.exit(4)\n");
  const std::string input = WriteFile(dir, "input.txt", "hello\nworld\n");
  CliRun run = RunCli({"--language", "python", "--file", source, "--stdin-file", input});
  EXPECT_EQ(run.exit_code(), 4) << run.Describe();
  EXPECT_EQ(run.out, "HELLO\nWORLD\n");
}

TEST(ChronoRunCli, EnvPassesNameValuePairs) {
  CliRun run = RunCli({"--language", "bash", "--env", "GREETING=hello", "--env", "EMPTY=", "--env",
                       "WITH_EQ=a=b", "-c",
                       "printf '%s|%s|%s' \"$GREETING\" \"${EMPTY-unset}\" \"$WITH_EQ\""});
  EXPECT_EQ(run.exit_code(), 0) << run.Describe();
  EXPECT_EQ(run.out, "hello||a=b");
}

TEST(ChronoRunCli, TheClisOwnEnvironmentNeverReachesTheProgram) {
  CliRun bash = RunCli({"--language", "bash", "-c", "env"});
  ASSERT_EQ(bash.exit_code(), 0) << bash.Describe();
  EXPECT_NE(bash.out.find("PATH="), std::string::npos) << bash.out;  // `env` did run
  EXPECT_EQ(bash.out.find(kPlantedSecret), std::string::npos) << bash.out;
  EXPECT_EQ(bash.out.find("CHRONO_TEST_SECRET"), std::string::npos) << bash.out;
  EXPECT_EQ(bash.out.find("NYXID_API_KEY"), std::string::npos) << bash.out;

  CliRun python = RunCli({"--language", "python", "-c",
                          "import os\nprint('\\n'.join(f'{k}={v}' for k, v in "
                          "os.environ.items()))"});
  ASSERT_EQ(python.exit_code(), 0) << python.Describe();
  EXPECT_EQ(python.out.find(kPlantedSecret), std::string::npos) << python.out;
}

// Every case must exit 2 with a message on stderr and print nothing the
// program would have printed.
void ExpectBadArguments(const std::vector<std::string>& args) {
  SCOPED_TRACE(Join(args));
  CliRun run = RunCli(args);
  EXPECT_TRUE(run.exited()) << run.Describe();
  EXPECT_EQ(run.exit_code(), 2) << run.Describe();
  EXPECT_FALSE(run.err.empty()) << run.Describe();
  EXPECT_EQ(run.out, "") << run.Describe();
  EXPECT_EQ(run.err.find(kRanMarker), std::string::npos) << run.Describe();
}

TEST(ChronoRunCli, BadArgumentsExit2WithAMessageAndRunNothing) {
  TempDir dir;
  const std::string echo = std::string("echo ") + kRanMarker;
  const std::string source = WriteFile(dir, "prog.sh", echo + "\n");
  const std::vector<std::vector<std::string>> cases = {
      {"-c", echo},                                          // no --language
      {"--language", "bash", "-c", echo, "--file", source},  // both sources
      {"--language", "bash"},                                // no source
      {"--language", "cobol", "-c", echo},                   // unknown language
      {"--language", "bash", "-c", echo, "--env", "NYXID_API_KEY=x"},
      {"--language", "bash", "-c", echo, "--env", "LD_PRELOAD=x"},
      {"--language", "bash", "-c", echo, "--env", "NO_EQUALS_SIGN"},
      {"--language", "bash", "-c", echo, "--timeout-secs", "0"},
      {"--language", "bash", "-c", echo, "--timeout-secs", "601"},
      {"--language", "bash", "-c", echo, "--timeout-secs", "soon"},
      {"--language", "bash", "-c", echo, "--backend", "docker"},
      {"--language", "bash", "-c", echo, "--json", "--env", "LD_PRELOAD=x"},
      {"--language", "bash", "-c", echo, "--runtime", "no-root=bash"},
      {"--language", "bash", "-c", echo, "--runtime", "Bad Name=bash:/srv"},
      // A runtime declared for another language than the run's.
      {"--language", "bash", "-c", echo, "--runtime",
       "py=python:/var/lib/aevatar/runtimes/python-data"},
  };
  for (const auto& args : cases) ExpectBadArguments(args);
}

TEST(ChronoRunCli, ARuntimeIsDeclaredAndChosenForOneRun) {
  const std::string root = "/var/lib/aevatar/runtimes/python-data";
  ASSERT_TRUE(std::filesystem::exists(root + "/pyvenv.cfg")) << root << ": run scripts/setup";
  const std::string source = "import numpy as np\nprint(int(np.arange(10).sum()))\n";
  CliRun run =
      RunCli({"--language", "python", "--runtime", "python-data=python:" + root, "-c", source});
  EXPECT_EQ(run.exit_code(), 0) << run.Describe();
  EXPECT_EQ(run.out, "45\n");
  CliRun plain = RunCli({"--language", "python", "-c", source});
  EXPECT_EQ(plain.exit_code(), 1) << plain.Describe();
  EXPECT_NE(plain.err.find("No module named 'numpy'"), std::string::npos) << plain.Describe();
}

TEST(ChronoRunCli, UnreadableFileOrStdinFileIsABadArgument) {
  TempDir dir;
  const std::string echo = std::string("echo ") + kRanMarker;
  const std::string missing = dir.path() + "/missing.sh";
  ExpectBadArguments({"--language", "bash", "--file", missing});
  ExpectBadArguments({"--language", "bash", "-c", echo, "--stdin-file", missing});
}

TEST(ChronoRunCli, DirectoryAsFileOrStdinFileIsABadArgument) {
  TempDir dir;
  const std::string echo = std::string("echo ") + kRanMarker;
  // A directory opens but cannot be read as a file: not an empty program or input.
  ExpectBadArguments({"--language", "bash", "--file", dir.path()});
  ExpectBadArguments({"--language", "bash", "-c", echo, "--stdin-file", dir.path()});
}

TEST(ChronoRunCli, AChildTheProgramLeftRunningDiesWithTheRun) {
  // An odd duration names the orphan among every process on the machine.
  const std::string duration = "29.7316";
  CliRun run = RunCli({"--language", "bash", "--timeout-secs", "5", "-c",
                       "sleep " + duration + " >/dev/null 2>&1 & echo started"});
  EXPECT_EQ(run.exit_code(), 0) << run.Describe();
  EXPECT_EQ(run.out, "started\n");
  // The CLI has exited; the kernel may still be reaping the SIGKILLed orphan.
  // It is a failure only if it outlives the wait (the orphan sleeps ~30 s).
  const std::string needle = std::string("sleep") + '\0' + duration;  // argv is NUL-separated
  std::vector<pid_t> left;
  PollUntil([&] { return (left = ProcessesMatching(needle)).empty(); }, std::chrono::seconds(10));
  EXPECT_TRUE(left.empty()) << "orphan pid " << left.front() << " still runs";
  for (pid_t pid : left) ::kill(pid, SIGKILL);
}

// More concurrent one-shot runs than the eight shared cgroup slots: each
// claims a free slot or makes a cgroup of its own, every one keeps its own
// memory limit, and none leaves a cgroup behind.
TEST(ChronoRunCli, ConcurrentRunsEachKeepTheirLimits) {
  constexpr int kRuns = 12;
  std::vector<CliRun> runs(kRuns);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRuns; ++i) {
    threads.emplace_back([&runs, i] {
      // The sleep makes the runs overlap before each outgrows its limit.
      runs[i] = RunCli({"--language", "python", "--json", "--memory-mb", "48", "-c",
                        "import time\ntime.sleep(0.5)\nx = bytearray(200 << 20)\n"});
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const CliRun& run : runs) {
    ASSERT_EQ(run.exit_code(), 0) << run.Describe();
    EXPECT_EQ(ParseResult(run.out).value("verdict", ""), "memory_limit") << run.out;
  }
}

TEST(ChronoRunCli, OneShotRunsLeaveNoCgroupBehind) {
  // RunCli checks right after each exit; this looks again after all three.
  const CliRun runs[] = {
      RunCli({"--language", "bash", "-c", "echo ok"}),
      RunCli({"--language", "bash", "-c", "exit 9"}),
      // The program dies with a child still running in its cgroup.
      RunCli({"--language", "bash", "--timeout-secs", "5", "-c",
              "sleep 30 >/dev/null 2>&1 & kill -KILL $$"}),
  };
  for (const CliRun& run : runs) {
    ASSERT_GT(run.pid, 0);
    const std::vector<std::string> now = RunCgroupsOf(run.pid);
    EXPECT_TRUE(now.empty()) << "pid " << run.pid << " left " << now.front();
  }
}

}  // namespace
}  // namespace aevatar::testing
