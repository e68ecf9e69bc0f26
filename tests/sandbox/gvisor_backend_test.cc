// The gvisor backend on its own: how it reads runsc, the OCI config it
// writes, and real runs under runsc that check limits, cleanup and the line
// between a program's failure (a verdict) and runsc's (an error).
#include "sandbox/gvisor_backend.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "os/unique_fd.h"
#include "sandbox/gvisor_oci_config.h"
#include "sandbox/gvisor_runsc.h"
#include "sandbox/runtime.h"
#include "testing/proc_file.h"

namespace aevatar::sandbox {
namespace {

namespace fs = std::filesystem;

constexpr char kRunsc[] = "/usr/bin/runsc";

TEST(RunscRunLog, ExitStatusLineGivesTheRawWaitStatus) {
  const RunscRunLog log = ParseRunscRunLog(
      "I1129 07:16:46.082 14106 sandbox.go:917] Sandbox started, PID: 14115\n"
      "I1129 07:16:46.195 14106 main.go:266] Exiting with status: 35072\n");
  ASSERT_TRUE(log.wait_status.has_value());
  EXPECT_EQ(*log.wait_status, 137 << 8);  // exit(137), not SIGKILL
  EXPECT_FALSE(log.waited_on_sandbox);
  EXPECT_EQ(ParseRunscRunLog("I1 main.go:266] Exiting with status: 9\n").wait_status, SIGKILL);
}

TEST(RunscRunLog, NoExitLineMeansRunscFailed) {
  const RunscRunLog log = ParseRunscRunLog(
      "W1129 07:16:51.857 14446 util.go:64] FATAL ERROR: running container: failed to load\n"
      "W1129 07:16:51.857 14446 main.go:275] Failure to execute command, err: 1\n");
  EXPECT_FALSE(log.wait_status.has_value());
  EXPECT_FALSE(ParseRunscRunLog("").wait_status.has_value());
}

TEST(RunscRunLog, NotesTheFallbackToWaitingOnTheSandboxProcess) {
  const RunscRunLog log = ParseRunscRunLog(
      "W1129 sandbox.go:957] Wait RPC to container \"c1\" failed: EOF. Will try waiting on the "
      "sandbox process instead.\n"
      "I1129 main.go:266] Exiting with status: 512\n");
  EXPECT_TRUE(log.waited_on_sandbox);
  EXPECT_EQ(log.wait_status, 512);
}

TEST(RunscErrorLog, KeepsTheMessagesOfJsonRecords) {
  EXPECT_EQ(ParseRunscErrorLog("{\"msg\":\"creating process: failed to load /x\",\"level\":"
                               "\"error\",\"time\":\"2026-11-29T07:16:38Z\"}"),
            "creating process: failed to load /x");
  EXPECT_EQ(ParseRunscErrorLog("plain text\n"), "plain text");
  EXPECT_EQ(ParseRunscErrorLog(""), "");
  EXPECT_LE(ParseRunscErrorLog(std::string(5000, 'x')).size(), 410u);
}

OciConfigInput SampleConfig() {
  OciConfigInput input;
  input.rootfs_dir = "/run/x/rootfs";
  input.workspace_dir = "/run/x/workspace";
  input.argv = {"/usr/bin/python3", "-I", "/workspace/main.py"};
  input.envp = {"PATH=/usr/bin", "HOME=/workspace"};
  input.limits.cpu_secs = 7;
  input.memory_limit_bytes = 100 << 20;
  input.pids_limit = 300;
  input.cgroups_path = "/chrono-sandbox/gvisor-1-2";
  return input;
}

TEST(GvisorOciConfig, RunsUnprivilegedInAReadOnlyRoot) {
  auto text = BuildOciConfig(SampleConfig());
  ASSERT_TRUE(text.ok()) << text.status();
  const nlohmann::json config = nlohmann::json::parse(*text);
  const nlohmann::json& process = config["process"];
  EXPECT_EQ(process["user"]["uid"], 65534);
  EXPECT_EQ(process["user"]["gid"], 65534);
  EXPECT_EQ(process["cwd"], "/workspace");
  EXPECT_EQ(process["noNewPrivileges"], true);
  for (const char* set : {"bounding", "effective", "inheritable", "permitted", "ambient"}) {
    EXPECT_TRUE(process["capabilities"][set].empty()) << set;
  }
  EXPECT_EQ(process["args"][0], "/usr/bin/python3");
  EXPECT_EQ(process["env"][1], "HOME=/workspace");
  EXPECT_EQ(config["root"]["readonly"], true);
  EXPECT_EQ(config["linux"]["cgroupsPath"], "/chrono-sandbox/gvisor-1-2");
  EXPECT_EQ(config["linux"]["resources"]["memory"]["limit"], 100 << 20);
  EXPECT_EQ(config["linux"]["resources"]["pids"]["limit"], 300);
  bool cpu = false, core = false;
  for (const auto& rlimit : process["rlimits"]) {
    if (rlimit["type"] == "RLIMIT_CPU") cpu = rlimit["soft"] == 7 && rlimit["hard"] == 8;
    if (rlimit["type"] == "RLIMIT_CORE") core = rlimit["hard"] == 0;
  }
  EXPECT_TRUE(cpu);
  EXPECT_TRUE(core);
  bool usr_ro = false, workspace_rw = false;
  for (const auto& mount : config["mounts"]) {
    const auto& options = mount["options"];
    auto has = [&](const char* o) {
      return std::find(options.begin(), options.end(), o) != options.end();
    };
    if (mount["destination"] == "/usr") usr_ro = mount["source"] == "/usr" && has("ro");
    if (mount["destination"] == "/workspace") {
      workspace_rw = mount["source"] == "/run/x/workspace" && has("rw");
    }
    EXPECT_NE(mount["destination"], "/etc") << "the host's /etc must never be mounted";
  }
  EXPECT_TRUE(usr_ro);
  EXPECT_TRUE(workspace_rw);
}

TEST(GvisorOciConfig, NonUtf8EnvIsRejectedRatherThanMangled) {
  OciConfigInput input = SampleConfig();
  input.envp.push_back("BYTES=\xff\xfe");
  EXPECT_TRUE(absl::IsInvalidArgument(BuildOciConfig(input).status()));
}

// Real runs under runsc, each backend with a private scratch directory so the
// test can see exactly what a run leaves behind.
class GvisorBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kRunsc, X_OK) != 0) GTEST_SKIP() << "runsc is not installed";
    char templ[] = "/tmp/gvisor-backend-test-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    base_ = templ;
    auto backend = GvisorBackend::Create(kRunsc, base_);
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
  }
  void TearDown() override {
    backend_.reset();
    std::error_code ec;
    if (!base_.empty()) fs::remove_all(base_, ec);
  }

  absl::StatusOr<RunResult> Run(const RunSpec& spec, const RunControl& control = {}) {
    PreparedRun prepared{&spec, PlanRuntime(spec.language), BuildProgramEnv(spec)};
    return backend_->Run(prepared, control);
  }

  static RunSpec Spec(Language language, std::string source) {
    RunSpec spec;
    spec.language = language;
    spec.source = std::move(source);
    spec.limits.wall_timeout_secs = 30;
    spec.backend = BackendKind::kGvisor;
    return spec;
  }

  // What runs left behind: files in the scratch base, live processes whose
  // command line names it (runsc, its sandbox and gofer) and this test
  // process's gvisor run cgroups.
  std::vector<std::string> Leftovers() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(base_)) found.push_back(entry.path());
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string pid = entry.path().filename();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::string cmdline = testing::ReadProcFile(entry.path() / "cmdline");
      if (absl::StrContains(cmdline, base_)) found.push_back("process " + pid);
    }
    // Every hierarchy: runsc also adds the run to ones the engine does not use.
    const std::string prefix = absl::StrCat("gvisor-", ::getpid(), "-");
    std::vector<fs::path> parents = {"/sys/fs/cgroup/chrono-sandbox"};
    std::error_code ec;
    for (const auto& hierarchy : fs::directory_iterator("/sys/fs/cgroup", ec)) {
      parents.push_back(hierarchy.path() / "chrono-sandbox");
    }
    for (const fs::path& parent : parents) {
      for (const auto& entry : fs::directory_iterator(parent, ec)) {
        if (absl::StartsWith(entry.path().filename().string(), prefix)) {
          found.push_back(entry.path());
        }
      }
    }
    return found;
  }

  std::string base_;
  std::unique_ptr<GvisorBackend> backend_;
};

TEST_F(GvisorBackendTest, RunsAsNobodyWithAGeneratedEtcAndAReadOnlyRoot) {
  auto result = Run(Spec(Language::kBash,
                         "id -u; id -g; grep -c . /etc/passwd; hostname\n"
                         "touch /usr/x 2>/dev/null || echo usr-ro\n"
                         "touch /etc/x 2>/dev/null || echo etc-ro\n"
                         "echo data > /tmp/t && cat /tmp/t\n"
                         "echo more > /workspace/out && cat /workspace/out\n"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_data, "65534\n65534\n2\nsandbox\nusr-ro\netc-ro\ndata\nmore\n")
      << result->stderr_data;
  EXPECT_EQ(result->verdict, Verdict::kOk);
  EXPECT_TRUE(Leftovers().empty());
}

TEST_F(GvisorBackendTest, ExitStatusAbove128IsNotASignal) {
  auto exited = Run(Spec(Language::kBash, "exit 137"));
  ASSERT_TRUE(exited.ok()) << exited.status();
  EXPECT_EQ(exited->exit_code, 137);
  EXPECT_EQ(exited->signal, 0);
  EXPECT_EQ(exited->verdict, Verdict::kNonzeroExit);
  auto killed = Run(Spec(Language::kBash, "kill -KILL $$"));
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(killed->signal, SIGKILL);
  EXPECT_EQ(killed->exit_code, 137);
  EXPECT_EQ(killed->verdict, Verdict::kSignaled);
}

TEST_F(GvisorBackendTest, WallTimeoutLeavesNoRunscProcessOrContainerState) {
  RunSpec spec = Spec(Language::kPython, "import time\nprint('up', flush=True)\ntime.sleep(60)\n");
  // Room for a loaded machine under a sanitizer to start Python in gVisor.
  spec.limits.wall_timeout_secs = 8;
  auto result = Run(spec);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->verdict, Verdict::kWallTimeout);
  EXPECT_EQ(result->stdout_data, "up\n");
  EXPECT_GE(result->wall_ms, 8000);
  EXPECT_LT(result->wall_ms, 30000);
  EXPECT_EQ(Leftovers(), std::vector<std::string>{});
}

TEST_F(GvisorBackendTest, CancelKillsTheRunAndLeavesNothing) {
  auto cancel = os::MakePipe();
  ASSERT_TRUE(cancel.ok());
  std::thread canceller([&] {
    // Usually lands while the program sleeps; a cancel during start-up must
    // end the run the same way, so the delay is not a synchronisation.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ASSERT_EQ(::write(cancel->write_end.get(), "x", 1), 1);
  });
  auto result = Run(Spec(Language::kBash, "echo started; sleep 60"),
                    RunControl{.cancel_fd = cancel->read_end.get()});
  canceller.join();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->cancelled);
  EXPECT_NE(result->verdict, Verdict::kOk);
  EXPECT_LT(result->wall_ms, 30000);  // cut short: the program sleeps 60 s
  EXPECT_EQ(Leftovers(), std::vector<std::string>{});
}

TEST_F(GvisorBackendTest, MemoryLimitIsAVerdict) {
  RunSpec spec = Spec(Language::kPython,
                      "chunks = []\n"
                      "for i in range(100):\n"
                      "    chunks.append(bytearray(16 << 20))\n"
                      "print('survived')\n");
  spec.limits.memory_bytes = 64 << 20;
  auto result = Run(spec);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->verdict, Verdict::kMemoryLimit) << result->stderr_data;
  EXPECT_EQ(result->stdout_data.find("survived"), std::string::npos);
  EXPECT_EQ(Leftovers(), std::vector<std::string>{});
}

TEST_F(GvisorBackendTest, CpuLimitIsAVerdict) {
  RunSpec spec = Spec(Language::kPython, "while True:\n    pass\n");
  spec.limits.cpu_secs = 1;
  auto result = Run(spec);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->verdict, Verdict::kCpuLimit);
}

TEST_F(GvisorBackendTest, FileSizeLimitIsAVerdict) {
  // Python ignores SIGXFSZ by default (writes fail with EFBIG instead).
  RunSpec spec = Spec(Language::kPython,
                      "import signal\n"
                      "signal.signal(signal.SIGXFSZ, signal.SIG_DFL)\n"
                      "with open('/tmp/big', 'wb') as f:\n"
                      "    f.write(b'x' * (4 << 20))\n");
  spec.limits.max_file_bytes = 1 << 20;
  auto result = Run(spec);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->verdict, Verdict::kFileSizeLimit) << result->stderr_data;
}

TEST_F(GvisorBackendTest, ForkBombHitsThePidsLimit) {
  RunSpec spec = Spec(Language::kBash, "for i in $(seq 200); do sleep 5 & done; wait");
  spec.limits.max_pids = 8;
  auto result = Run(spec);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->verdict, Verdict::kPidsLimit);
  // A crashing sentry's Go dump goes to runsc's panic log, not to the caller.
  EXPECT_EQ(result->stderr_data.find("goroutine"), std::string::npos);
  EXPECT_EQ(Leftovers(), std::vector<std::string>{});
}

TEST_F(GvisorBackendTest, RunscSetupFailureIsAnErrorNotAVerdict) {
  // A stand-in for runsc that hands the real one a config it cannot start:
  // the /usr bind mount's source does not exist.
  char templ[] = "/tmp/gvisor-backend-tool-XXXXXX";
  ASSERT_NE(::mkdtemp(templ), nullptr);
  const std::string wrapper = std::string(templ) + "/runsc";
  {
    std::ofstream script(wrapper);
    script << "#!/bin/sh\n"
              "for arg; do [ \"$prev\" = --bundle ] && bundle=$arg; prev=$arg; done\n"
              "[ -n \"$bundle\" ] && sed -i 's|\"source\":\"/usr\"|\"source\":\"/no-such-usr\"|' "
              "\"$bundle/config.json\"\n"
              "exec "
           << kRunsc << " \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  auto broken = GvisorBackend::Create(wrapper, base_);
  ASSERT_TRUE(broken.ok()) << broken.status();
  RunSpec spec = Spec(Language::kBash, "echo should not run");
  PreparedRun prepared{&spec, PlanRuntime(spec.language), BuildProgramEnv(spec)};
  auto result = (*broken)->Run(prepared, {});
  fs::remove_all(templ);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "runsc failed")) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "no-such-usr")) << result.status();
  EXPECT_EQ(Leftovers(), std::vector<std::string>{});
}

TEST_F(GvisorBackendTest, MissingRuntimeIsAnErrorNotAVerdict) {
  RunSpec spec = Spec(Language::kBash, "true");
  PreparedRun prepared{&spec, PlanRuntime(spec.language), BuildProgramEnv(spec)};
  prepared.runtime.stages = {{"/usr/bin/no-such-runtime", {"no-such-runtime"}}};
  auto result = backend_->Run(prepared, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal) << result.status();
  EXPECT_EQ(Leftovers(), std::vector<std::string>{});
}

TEST_F(GvisorBackendTest, RunscItselfFailingIsAnError) {
  // /bin/false stands in for a broken runsc: it exits 1 and logs nothing.
  auto broken = GvisorBackend::Create("/bin/false", base_);
  ASSERT_TRUE(broken.ok()) << broken.status();
  RunSpec spec = Spec(Language::kBash, "exit 1");
  PreparedRun prepared{&spec, PlanRuntime(spec.language), BuildProgramEnv(spec)};
  auto result = (*broken)->Run(prepared, {});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::StrContains(result.status().message(), "runsc failed")) << result.status();
}

TEST_F(GvisorBackendTest, ConcurrentRunsStayApart) {
  constexpr int kRuns = 3;
  std::vector<absl::StatusOr<RunResult>> results(kRuns, absl::UnknownError("not run"));
  std::vector<RunSpec> specs;
  for (int i = 0; i < kRuns; ++i) {
    specs.push_back(
        Spec(Language::kPython,
             absl::StrCat("import os\nopen('mine', 'w').write('", i,
                          "')\nprint(sorted(os.listdir('.')), open('mine').read())\n")));
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < kRuns; ++i) {
    threads.emplace_back([&, i] { results[i] = Run(specs[i]); });
  }
  for (auto& thread : threads) thread.join();
  for (int i = 0; i < kRuns; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    EXPECT_EQ(results[i]->stdout_data, absl::StrCat("['main.py', 'mine'] ", i, "\n"));
  }
  EXPECT_EQ(Leftovers(), std::vector<std::string>{});
}

}  // namespace
}  // namespace aevatar::sandbox
