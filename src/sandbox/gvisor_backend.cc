#include "sandbox/gvisor_backend.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "os/process.h"
#include "sandbox/gvisor_bundle.h"
#include "sandbox/gvisor_cgroups.h"
#include "sandbox/gvisor_oci_config.h"
#include "sandbox/gvisor_runsc.h"
#include "sandbox/verdict.h"

namespace aevatar::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

// Re-applies RLIMIT_CPU inside the sandbox (see StageArgv).
constexpr char kPrlimitPath[] = "/usr/bin/prlimit";

// Run names are unique in the process, across backends: they name cgroups
// and containers.
std::atomic<uint64_t> next_run{0};

// The argv runsc starts for `stage`. gVisor 20221219 applies the config's
// RLIMIT_CPU to the process but never arms the timer that enforces it (a
// setrlimit from inside does), so util-linux prlimit sets it again from
// inside the sandbox and then execs the stage. OCI has no executable path
// apart from argv[0], and runsc would look a bare name up in the program's
// PATH (which callers may set): the stage's absolute path pins the binary
// the runtime chose, as the native backend's execve does.
std::vector<std::string> StageArgv(const RuntimeStage& stage, const Limits& limits) {
  const uint64_t cpu = CpuLimitSecs(limits);
  std::vector<std::string> argv = {kPrlimitPath, absl::StrCat("--cpu=", cpu, ":", cpu + 1), "--",
                                   stage.path};
  if (stage.argv.size() > 1) argv.insert(argv.end(), stage.argv.begin() + 1, stage.argv.end());
  return argv;
}

void AppendCapped(os::StreamCapture& total, os::StreamCapture& stage, size_t cap) {
  const size_t room = cap > total.data.size() ? cap - total.data.size() : 0;
  const size_t keep = std::min(room, stage.data.size());
  total.data.append(stage.data, 0, keep);
  total.truncated = total.truncated || stage.truncated || keep < stage.data.size();
  total.total_bytes += stage.total_bytes;
}

// The cgroup's counters for one stage, from before and after it.
os::CgroupUsage UsageSince(const os::CgroupUsage& now, const os::CgroupUsage& before) {
  return {
      .cpu_ns = now.cpu_ns - before.cpu_ns,
      .memory_peak_bytes = now.memory_peak_bytes,
      .oom_kills = now.oom_kills - before.oom_kills,
      .pids_max_events = now.pids_max_events - before.pids_max_events,
  };
}

// How a stage ended, for the verdict.
struct StageEnd {
  int wait_status = 0;              // of the program; SIGKILL when it was killed
  bool leftovers_possible = false;  // runsc did not finish the container itself
};

// Returns how a stage ended, or an error when runsc or gVisor itself failed
// (gvisor_runsc.h explains the evidence). `usage` is the stage's own.
absl::StatusOr<StageEnd> ClassifyStage(const ContainerOutcome& outcome,
                                       const os::CgroupUsage& usage) {
  const RunscRunLog& log = outcome.log;
  const bool killed = outcome.output.end != os::PumpEnd::kExited;
  const bool limit_hit = usage.oom_kills > 0 || usage.pids_max_events > 0;
  // A signal on the sandbox process itself (the program's own signals come
  // through the control server) means gVisor was killed under the program.
  const bool sandbox_killed =
      log.waited_on_sandbox && log.wait_status.has_value() && WIFSIGNALED(*log.wait_status);
  const bool clean_end = log.wait_status.has_value() && !sandbox_killed && !outcome.sentry_panicked;
  if (clean_end && !killed) {
    if (usage.cpu_ns == 0) {
      return absl::InternalError("the gVisor sandbox ran outside the run's cgroup");
    }
    return StageEnd{.wait_status = *log.wait_status};
  }
  // Our kill, or a limit that took the sandbox down: the program's verdict.
  if (killed || limit_hit) return StageEnd{.wait_status = SIGKILL, .leftovers_possible = true};
  if (!log.wait_status.has_value()) {
    return absl::InternalError(absl::StrCat("runsc failed (wait status ", outcome.runsc_wait_status,
                                            "): ", outcome.runsc_error));
  }
  return absl::InternalError(outcome.sentry_panicked
                                 ? "the gVisor sentry crashed while the program ran"
                                 : "the gVisor sandbox was killed while the program ran");
}

int64_t Millis(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<GvisorBackend>> GvisorBackend::Create(
    const std::string& runsc_path, const std::string& scratch_base_dir) {
  if (!os::IsExecutable(runsc_path)) {
    return absl::FailedPreconditionError(absl::StrCat("runsc is not executable: ", runsc_path));
  }
  if (!os::IsExecutable(kPrlimitPath)) {
    return absl::FailedPreconditionError(absl::StrCat("the gvisor backend needs ", kPrlimitPath,
                                                      " (util-linux) to enforce the CPU limit"));
  }
  auto cgroups = os::DetectCgroupManager(kGvisorCgroupParent);
  if (!cgroups.ok()) return cgroups.status();
  auto roots = RunscCgroupRoots(**cgroups);
  if (!roots.ok()) return roots.status();
  std::string base = scratch_base_dir.empty() ? DefaultGvisorScratchBase() : scratch_base_dir;
  return std::unique_ptr<GvisorBackend>(
      new GvisorBackend(runsc_path, std::move(base), std::move(*cgroups), std::move(*roots)));
}

absl::StatusOr<RunResult> GvisorBackend::Run(const PreparedRun& run, const RunControl& control) {
  const RunSpec& spec = *run.spec;
  const Limits& limits = spec.limits;
  // prlimit execs each stage, so a missing runtime would pass for the
  // program's own failure: the sandbox sees the host's /usr, so check there.
  for (const RuntimeStage& stage : run.runtime.stages) {
    if (!os::IsExecutable(stage.path)) {
      return absl::InternalError(absl::StrCat("runtime not installed: ", stage.path));
    }
  }
  const std::string name = absl::StrCat("gvisor-", os::CurrentPid(), "-", next_run.fetch_add(1));
  const std::string cgroups_path = absl::StrCat("/", kGvisorCgroupParent, "/", name);

  // Destroyed in reverse: the run cgroup kills what is left of the sandbox,
  // then runsc's extra cgroups and the directory go.
  auto dir = GvisorRunDir::Create(scratch_base_dir_, run.runtime.source_path, spec.source);
  if (!dir.ok()) return dir.status();
  if (auto st = dir->AddServerFiles(spec.server_files); !st.ok()) return st;
  if (auto st = dir->AddMemoryDirMountPoints(spec.memory_dirs); !st.ok()) return st;
  RunscCgroupSweeper sweeper(cgroup_roots_, cgroups_path);
  const os::CgroupLimits host_limits = GvisorHostLimits(limits);
  auto cgroup = cgroups_->Create(name, host_limits);
  if (!cgroup.ok()) return cgroup.status();
  const bool given_netns = control.netns_fd >= 0;
  Runsc runsc(runsc_path_, dir->state_dir(), dir->log_dir(), /*host_network=*/given_netns);

  OciConfigInput config;
  config.rootfs_dir = dir->rootfs_dir();
  config.workspace_dir = dir->workspace_dir();
  config.host_dirs_to_bind = dir->host_dirs_to_bind();
  config.envp = run.envp;
  config.limits = limits;
  config.memory_limit_bytes = host_limits.memory_bytes;
  config.pids_limit = host_limits.max_pids;
  config.cgroups_path = cgroups_path;
  config.server_files = spec.server_files;
  config.memory_dirs = spec.memory_dirs;
  // runsc (root) opens the namespace through our descriptor table.
  if (given_netns) {
    config.netns_path = absl::StrCat("/proc/", os::CurrentPid(), "/fd/", control.netns_fd);
  }

  os::PumpOptions pump;
  pump.max_bytes_per_stream = limits.max_output_bytes;
  pump.cancel_fd = control.cancel_fd;
  os::StreamCapture out, err;
  RunFacts facts;
  os::CgroupUsage usage;  // cumulative over the stages so far
  const Clock::time_point started = Clock::now();
  pump.deadline = started + std::chrono::seconds(limits.wall_timeout_secs);
  Clock::time_point finished = started;

  for (size_t i = 0; i < run.runtime.stages.size(); ++i) {
    config.argv = StageArgv(run.runtime.stages[i], limits);
    auto text = BuildOciConfig(config);
    if (!text.ok()) return text.status();
    if (auto st = dir->WriteConfig(*text); !st.ok()) return st;
    const std::string id = absl::StrCat(name, "-", i);

    auto outcome = runsc.Run(dir->path(), id, spec.stdin_data, pump);
    if (!outcome.ok()) return outcome.status();
    finished = Clock::now();
    auto after = (*cgroup)->ReadUsage();
    if (!after.ok()) return after.status();
    const os::CgroupUsage stage_usage = UsageSince(*after, usage);
    usage = *after;
    AppendCapped(out, outcome->output.out, limits.max_output_bytes);
    AppendCapped(err, outcome->output.err, limits.max_output_bytes);

    auto end = ClassifyStage(*outcome, stage_usage);
    if (!end.ok()) {
      (void)runsc.ForceDelete(id);
      return end.status();
    }
    if (end->leftovers_possible) {
      // Killed at the deadline or on cancel (the sandbox dies with runsc),
      // or taken down by a limit: make sure nothing of it is left.
      if (auto st = runsc.ForceDelete(id); !st.ok()) return st;
    }
    facts.wall_timeout = outcome->output.end == os::PumpEnd::kDeadline;
    facts.cancelled = outcome->output.end == os::PumpEnd::kCancelled;
    facts.wait_status = end->wait_status;
    // The whole sandbox's CPU (gVisor's included) stands in for the
    // program's: its own rusage is not visible from outside the sentry.
    facts.stage_cpu_ms = static_cast<int64_t>(stage_usage.cpu_ns / 1'000'000);
    if (facts.wait_status != 0) break;  // stages stop at the first failure
  }
  if (auto st = (*cgroup)->Destroy(); !st.ok()) return st;
  if (auto st = sweeper.Sweep(); !st.ok()) return st;

  RunResult result;
  result.stdout_data = std::move(out.data);
  result.stderr_data = std::move(err.data);
  result.stdout_truncated = out.truncated;
  result.stderr_truncated = err.truncated;
  result.wall_ms = Millis(finished - started);
  // Best effort, like stage_cpu_ms: the sandbox's cgroup counters.
  result.cpu_ms = static_cast<int64_t>(usage.cpu_ns / 1'000'000);
  result.max_rss_kb = static_cast<int64_t>(usage.memory_peak_bytes / 1024);

  facts.cpu_limit_secs = static_cast<int>(CpuLimitSecs(limits));
  facts.oom_kills = usage.oom_kills;
  facts.pids_max_events = usage.pids_max_events;
  facts.output_truncated = result.stdout_truncated || result.stderr_truncated;
  ApplyVerdict(facts, result);
  return result;
}

}  // namespace aevatar::sandbox
