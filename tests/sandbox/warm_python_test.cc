// Warm Python sandboxes (warm_python.h): a program run in one must see and
// do what it would in a cold start. Each case runs the same program both
// ways on one engine (a run with other limits starts cold) and compares
// everything a caller gets back; the served counter proves which way ran.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "gtest/gtest.h"
#include "sandbox/engine.h"
#include "testing/poll.h"

namespace aevatar::sandbox {
namespace {

Limits WarmLimits() {
  Limits limits;
  limits.wall_timeout_secs = 15;
  return limits;
}

// Limits no warm sandbox is kept for: the run starts cold.
Limits ColdLimits() {
  Limits limits;
  limits.wall_timeout_secs = 20;
  return limits;
}

class WarmPythonTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    EngineOptions options;
    options.warm_python = 1;
    options.warm_python_limits = WarmLimits();
    auto engine = Engine::Create(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine).release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(engine_, nullptr) << "the engine was not created"; }

  static bool WarmReady() {
    return testing::PollUntil([] { return engine_->warm_python_stats().ready >= 1; });
  }

  // Runs `spec` and says whether a warm sandbox took it.
  static RunResult RunCounted(const RunSpec& spec, bool* warm) {
    const size_t served = engine_->warm_python_stats().served;
    auto result = engine_->Run(spec);
    EXPECT_TRUE(result.ok()) << result.status();
    *warm = engine_->warm_python_stats().served == served + 1;
    return result.ok() ? *std::move(result) : RunResult{};
  }

  // Runs `source` warm (`want_warm`, after waiting for a ready sandbox) or
  // cold, and checks which way it ran.
  static RunResult RunOneWay(bool want_warm, const std::string& source,
                             const std::string& stdin_data = "") {
    if (want_warm) {
      EXPECT_TRUE(WarmReady());
    }
    RunSpec spec;
    spec.source = source;
    spec.stdin_data = stdin_data;
    spec.limits = want_warm ? WarmLimits() : ColdLimits();
    bool warm = !want_warm;
    RunResult result = RunCounted(spec, &warm);
    EXPECT_EQ(warm, want_warm) << (want_warm ? "the run started cold" : "the run took a warm one");
    return result;
  }
  static RunResult RunWarm(const std::string& source, const std::string& stdin_data = "") {
    return RunOneWay(true, source, stdin_data);
  }

  // The same program both ways: every field a caller reads must match.
  static void ExpectAlike(const std::string& source, const std::string& stdin_data = "") {
    const RunResult cold = RunOneWay(false, source, stdin_data);
    const RunResult warm = RunWarm(source, stdin_data);
    EXPECT_EQ(warm.stdout_data, cold.stdout_data) << source;
    EXPECT_EQ(warm.stderr_data, cold.stderr_data) << source;
    EXPECT_EQ(warm.exit_code, cold.exit_code) << source;
    EXPECT_EQ(warm.signal, cold.signal) << source;
    EXPECT_EQ(warm.verdict, cold.verdict) << source;
  }

  static Engine* engine_;
};

Engine* WarmPythonTest::engine_ = nullptr;

TEST_F(WarmPythonTest, HelloWorldRunsWarm) {
  const RunResult r = RunWarm("print('hello, warm')");
  EXPECT_EQ(r.stdout_data, "hello, warm\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.verdict, Verdict::kOk);
}

TEST_F(WarmPythonTest, TheProgramSeesTheInterpreterStateOfAColdStart) {
  ExpectAlike(R"(import sys, os
print(sorted(sys.modules))
print(list(globals()))
print(__name__, __file__, type(__loader__).__name__, __spec__, __cached__, __package__)
print(sys.argv, sys.orig_argv, sys.path, sys.flags)
print(os.getcwd(), open(__file__).read() == open('/workspace/main.py').read())
print(sorted(os.listdir('/workspace')), os.listdir('/proc/self/fd'))
print(sys.path_importer_cache.get(__file__, 'absent'))
import atexit
atexit.register(lambda: print('at exit:', sorted(globals()), hasattr(sys, 'last_value')))
)");
}

TEST_F(WarmPythonTest, StdinIsTheCallersAfterTheProgram) {
  ExpectAlike("import sys\ndata = sys.stdin.read()\nprint(len(data), repr(data[:20]))\n",
              std::string(200000, 'x') + "\nend\n");
  ExpectAlike("import sys\nprint(repr(sys.stdin.read()))\n");
}

TEST_F(WarmPythonTest, FailuresReadAsInAColdStart) {
  ExpectAlike("def f():\n    1 / 0\nf()\n");                   // traceback, exit 1
  ExpectAlike("x = (\n");                                      // syntax error
  ExpectAlike("import sys\nprint('out')\nsys.exit('bye')\n");  // message, exit 1
  ExpectAlike("raise SystemExit(3)\n");                        // exit code
  ExpectAlike("try:\n    {}['k']\nexcept KeyError as e:\n    raise ValueError('v') from e\n");
  ExpectAlike("import atexit\natexit.register(print, 'at exit')\nraise KeyboardInterrupt\n");
  // What exit handlers see after an uncaught error: no __file__, sys.last_*.
  ExpectAlike(
      "import atexit, sys\n"
      "atexit.register(lambda: print(sorted(globals()), repr(sys.last_value)))\n"
      "raise ValueError('late')\n");
  ExpectAlike("import os\nos.kill(os.getpid(), 9)\n");  // signalled
}

TEST_F(WarmPythonTest, SourceEncodingsAsInAColdStart) {
  ExpectAlike("\xef\xbb\xbfprint('after a BOM')\n");
  ExpectAlike("print(len('\xc3\xa9'), '\xe2\x82\xac')\n");
}

// An engine of its own with `count` warm sandboxes for runs with `limits`.
std::unique_ptr<Engine> WarmEngine(size_t count, const Limits& limits) {
  EngineOptions options;
  options.warm_python = count;
  options.warm_python_limits = limits;
  auto engine = Engine::Create(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? std::move(*engine) : nullptr;
}

bool PoolFull(const Engine& engine, size_t count) {
  return testing::PollUntil([&] { return engine.warm_python_stats().ready >= count; });
}

// The wall deadline counts from the program's arrival, not the sandbox's
// start: one that waited longer than the whole timeout still gets all of it.
TEST(WarmPythonDeadline, TheWallTimeoutCountsFromDispatch) {
  Limits short_limits;
  short_limits.wall_timeout_secs = 2;
  const std::unique_ptr<Engine> engine = WarmEngine(1, short_limits);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(PoolFull(*engine, 1));
  std::this_thread::sleep_for(std::chrono::seconds(short_limits.wall_timeout_secs) +
                              std::chrono::milliseconds(500));
  RunSpec spec;
  spec.limits = short_limits;
  spec.source = "import time\ntime.sleep(0.5)\nprint('done')\n";
  auto waited = engine->Run(spec);
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_EQ(waited->verdict, Verdict::kOk);
  EXPECT_EQ(waited->stdout_data, "done\n");
  ASSERT_TRUE(PoolFull(*engine, 1));
  spec.source = "import time\ntime.sleep(30)\n";
  auto slow = engine->Run(spec);
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ(slow->verdict, Verdict::kWallTimeout);
  EXPECT_EQ(engine->warm_python_stats().served, 2u);
}

// Two runs in warm sandboxes of one pool share nothing: what the first
// leaves (files in /tmp, /workspace and /dev/shm, an abstract socket, a
// process left running) is gone for the second, and neither can see the
// other sandbox's waiting interpreter (same uid, other pid namespace).
TEST(WarmPythonIsolation, WarmRunsShareNothingWithEachOtherOrTheWaitingOnes) {
  Limits limits;
  limits.wall_timeout_secs = 15;
  const std::unique_ptr<Engine> engine = WarmEngine(2, limits);
  ASSERT_NE(engine, nullptr);
  const std::string waiting_probe =
      "[p for p in os.listdir('/proc') if p.isdigit() and p != str(os.getpid()) and "
      "'_aevatar_warm_start' in open('/proc/' + p + '/cmdline').read()]";
  RunSpec leave;
  leave.limits = limits;
  leave.source =
      "import os, socket, subprocess\n"
      "for path in ('/tmp/left', '/workspace/left', '/dev/shm/left'):\n"
      "    open(path, 'w').write('from the first run')\n"
      "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
      "s.bind('\\0aevatar-warm-left')\n"
      "s.listen()\n"
      "subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
      "print(" +
      waiting_probe + ")\n";
  RunSpec look;
  look.limits = limits;
  look.source =
      "import os, socket\n"
      "print([p for p in ('/tmp/left', '/workspace/left', '/dev/shm/left') if os.path.exists(p)])\n"
      "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
      "try:\n"
      "    s.connect('\\0aevatar-warm-left')\n"
      "    print('socket reached')\n"
      "except OSError:\n"
      "    print('no socket')\n"
      "print(len([p for p in os.listdir('/proc') if p.isdigit()]))\n"
      "print(" +
      waiting_probe + ")\n";
  ASSERT_TRUE(PoolFull(*engine, 2));
  auto first = engine->Run(leave);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->stdout_data, "[]\n") << first->stderr_data;
  ASSERT_TRUE(PoolFull(*engine, 2));
  auto second = engine->Run(look);
  ASSERT_TRUE(second.ok()) << second.status();
  // Its /proc shows itself alone (its init is root's, hidden by hidepid).
  EXPECT_EQ(second->stdout_data, "[]\nno socket\n1\n[]\n") << second->stderr_data;
  EXPECT_EQ(engine->warm_python_stats().served, 2u);
}

TEST_F(WarmPythonTest, OtherRunsStartCold) {
  ASSERT_TRUE(WarmReady());
  RunSpec with_env;
  with_env.source = "import os\nprint(os.environ['GREETING'])\n";
  with_env.env = {{"GREETING", "hi"}};
  with_env.limits = WarmLimits();
  RunSpec javascript;
  javascript.language = Language::kJavaScript;
  javascript.source = "console.log('js')";
  javascript.limits = WarmLimits();
  RunSpec too_big;
  too_big.source = "print(len('" + std::string(1 << 20, 'a') + "'))\n";
  too_big.limits = WarmLimits();
  // Python words some sources' errors differently when it compiles bytes
  // than when it reads a file: those not UTF-8, with a NUL byte, or with an
  // encoding declaration.
  RunSpec latin1;
  latin1.source = "# -*- coding: latin-1 -*-\nprint(len('\xe9'))\n";
  latin1.limits = WarmLimits();
  RunSpec nul;
  nul.source = std::string("print(1)\0\n", 10);
  nul.limits = WarmLimits();
  RunSpec declared;
  declared.source = "# -*- coding: ascii -*-\nprint('\xc3\xa9')\n";
  declared.limits = WarmLimits();
  const std::pair<RunSpec, std::string> cases[] = {
      {with_env, "hi\n"}, {javascript, "js\n"}, {too_big, std::to_string(1 << 20) + "\n"},
      {latin1, "1\n"},    {nul, "1\n"},         {declared, ""}};
  for (const auto& [spec, expected] : cases) {
    bool warm = true;
    const RunResult r = RunCounted(spec, &warm);
    EXPECT_FALSE(warm) << spec.source.substr(0, 40);
    EXPECT_FALSE(engine_->FitsWarmPython(spec)) << spec.source.substr(0, 40);
    EXPECT_EQ(r.stdout_data, expected);
  }
  RunSpec fits;
  fits.source = "print(1)";
  fits.limits = WarmLimits();
  EXPECT_TRUE(engine_->FitsWarmPython(fits));
}

std::string ReadProcFile(pid_t pid, const char* name) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

pid_t ParentOf(pid_t pid) {
  const std::string status = ReadProcFile(pid, "status");
  const size_t at = status.find("\nPPid:\t");
  return at == std::string::npos ? 0 : static_cast<pid_t>(std::atoi(status.c_str() + at + 7));
}

// The state letter of /proc/<pid>/stat ('Z' for a zombie), or 0 if gone.
char StateOf(pid_t pid) {
  const std::string stat = ReadProcFile(pid, "stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? 0 : stat[paren + 2];
}

// The host pid of a warm interpreter of this process's engine (its command
// line holds the start-up code; its parent is an init this process
// started), or 0. Other test binaries may keep warm sandboxes too.
pid_t OurWaitingInterpreter() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::atoi(name.c_str()));
    if (ReadProcFile(pid, "cmdline").find("_aevatar_warm_start") == std::string::npos) continue;
    if (ParentOf(ParentOf(pid)) == ::getpid()) return pid;
  }
  return 0;
}

// A warm interpreter killed while it waits must not pass its death off as
// the next program's: that run starts cold, and a new one is made.
TEST_F(WarmPythonTest, AnInterpreterThatDiedWaitingIsNotUsed) {
  ASSERT_TRUE(WarmReady());
  pid_t interpreter = 0;
  ASSERT_TRUE(testing::PollUntil([&] { return (interpreter = OurWaitingInterpreter()) != 0; }));
  const pid_t init = ParentOf(interpreter);
  ASSERT_EQ(::kill(interpreter, SIGKILL), 0);
  // Its init reaps it, reports and exits, and waits to be reaped itself.
  ASSERT_TRUE(testing::PollUntil([&] { return StateOf(init) == 'Z'; }));

  RunSpec spec;
  spec.source = "print('still fine')";
  spec.limits = WarmLimits();
  const size_t served = engine_->warm_python_stats().served;
  auto result = engine_->Run(spec);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_data, "still fine\n");
  EXPECT_EQ(result->verdict, Verdict::kOk);
  EXPECT_EQ(engine_->warm_python_stats().served, served);
  EXPECT_TRUE(WarmReady());
}

TEST(WarmPythonOptions, WarmLimitsAboveTheMaximaAreRefused) {
  EngineOptions options;
  options.warm_python = 1;
  options.warm_python_limits.wall_timeout_secs = options.max_limits.wall_timeout_secs + 1;
  EXPECT_FALSE(Engine::Create(options).ok());
}

}  // namespace
}  // namespace aevatar::sandbox
