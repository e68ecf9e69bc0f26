#include "sandbox/native_backend.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "base/errno_error.h"
#include "os/child_handoff.h"
#include "os/init_image.h"
#include "os/init_spawn.h"
#include "os/output_pump.h"
#include "os/precompiled_seccomp_policy.h"
#include "os/process.h"
#include "os/unique_fd.h"
#include "sandbox/native_run_parts.h"
#include "sandbox/rootfs_plan.h"
#include "sandbox/verdict.h"
namespace aevatar::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

// The network namespace comes from the pool (joined with setns) when there
// is one, made ahead of time because it is the slowest namespace to set up.
constexpr int kNamespaceFlags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;

// One-shot processes share this many run cgroups (os::ClaimSharedCgroup):
// more concurrent `chrono-sandbox run`s than this make cgroups of their own.
constexpr size_t kSharedCgroupSlots = 8;

std::vector<os::ChildRlimit> BuildRlimits(const Limits& limits) {
  const auto cpu = static_cast<rlim_t>(EffectiveCpuLimitSecs(limits));
  return {
      {RLIMIT_CPU, cpu, cpu + 1},
      {RLIMIT_FSIZE, limits.max_file_bytes, limits.max_file_bytes},
      {RLIMIT_NOFILE, limits.max_open_files, limits.max_open_files},
      {RLIMIT_CORE, 0, 0},
      {RLIMIT_STACK, 8u << 20, 8u << 20},
      {RLIMIT_MEMLOCK, 64u << 10, 64u << 10},
      {RLIMIT_MSGQUEUE, 0, 0},
  };
}

// Reads a fixed-size record; returns false at EOF (nothing was sent).
template <typename T>
bool ReadRecord(int fd, T& record) {
  return os::ReadExactly(fd, &record, sizeof(record));
}

int64_t TimevalMs(const timeval& tv) { return tv.tv_sec * 1000 + tv.tv_usec / 1000; }

// The init's report of a failed set-up step, if it sent one (call once the
// init is gone: reads until EOF), naming the path the step worked on.
absl::Status SetupFailure(int error_pipe, const os::ChildPlan& plan) {
  os::ChildFailure failure{};
  if (!ReadRecord(error_pipe, failure)) return absl::OkStatus();
  return absl::InternalError("sandbox setup failed at " + os::DescribeChildFailure(plan, failure));
}

// Sends the init the run cgroup's cgroup.procs files, opened for writing, and
// the network namespace (-1: the clone made one).
absl::Status HandOff(int channel, os::RunCgroup& cgroup, int netns_fd) {
  auto procs = cgroup.JoinFds();
  if (!procs.ok()) return procs.status();
  return os::SendHandoff(channel, *procs, netns_fd);
}

}  // namespace

using native_internal::CArgv;
using native_internal::LeasedCgroup;

absl::StatusOr<std::unique_ptr<NativeBackend>> NativeBackend::Create(size_t prepared_namespaces,
                                                                     bool one_shot,
                                                                     const std::string& init_path) {
  if (!os::RunningAsRoot()) {
    return absl::FailedPreconditionError(
        "the native backend needs root (it creates namespaces, mounts and cgroups)");
  }
  auto path =
      init_path.empty() ? os::DefaultInitExecutablePath() : absl::StatusOr<std::string>(init_path);
  if (!path.ok()) return path.status();
  auto init_exe = os::OpenInitExecutable(*path);
  if (!init_exe.ok()) return init_exe.status();
  // Started first: its thread makes a namespace while this one finds the
  // cgroups. A one-shot process gets exactly one, off its critical path.
  std::unique_ptr<os::NetnsPool> netns_pool;
  if (one_shot) {
    netns_pool = std::make_unique<os::NetnsPool>(1, /*lifetime_total=*/1);
  } else if (prepared_namespaces > 0) {
    netns_pool = std::make_unique<os::NetnsPool>(prepared_namespaces);
  }
  auto cgroups = os::DetectCgroupManager("chrono-sandbox");
  if (!cgroups.ok()) return cgroups.status();
  if (!one_shot) (*cgroups)->RemoveStale("run-");
  return std::unique_ptr<NativeBackend>(new NativeBackend(std::move(*init_exe), std::move(*cgroups),
                                                          std::move(netns_pool),
                                                          one_shot ? kSharedCgroupSlots : 0));
}

NativeBackend::NativeBackend(os::UniqueFd init_exe, std::unique_ptr<os::CgroupManager> cgroups,
                             std::unique_ptr<os::NetnsPool> netns_pool, size_t shared_cgroups)
    : init_exe_(std::move(init_exe)),
      seccomp_(os::PrecompiledSandboxPolicy()),
      cgroups_(std::move(cgroups)),
      netns_pool_(std::move(netns_pool)),
      cgroup_pool_(cgroups_.get(), absl::StrCat("run-", os::CurrentPid(), "-"), /*max_idle=*/8,
                   shared_cgroups) {}

NativeBackend::InitPlan::InitPlan(const PreparedRun& run, const os::SeccompProgram& seccomp,
                                  bool handed_netns)
    : rootfs_(run.spec->limits, run.runtime.source_path, run.spec->source, run.spec->server_files,
              run.spec->memory_dirs, run.runtime.layout),
      rlimits_(BuildRlimits(run.spec->limits)),
      envp_(run.envp) {
  argvs_.reserve(run.runtime.stages.size());
  for (const RuntimeStage& stage : run.runtime.stages) {
    argvs_.emplace_back(stage.argv);
    stages_.push_back({stage.path.c_str(), argvs_.back().ptrs.data(), envp_.ptrs.data()});
  }
  plan_.root_mount_point = kRootMountPoint;
  plan_.root_mount_options = rootfs_.root_options();
  plan_.old_root_name = ".oldroot";
  plan_.fs_steps = rootfs_.steps().data();
  plan_.fs_step_count = rootfs_.steps().size();
  plan_.hostname = "sandbox";
  plan_.workdir = kWorkspaceDir;
  plan_.uid = kSandboxUid;
  plan_.gid = kSandboxGid;
  plan_.rlimits = rlimits_.data();
  plan_.rlimit_count = rlimits_.size();
  plan_.stages = stages_.data();
  plan_.stage_count = stages_.size();
  plan_.seccomp = seccomp.program();
  plan_.unshare_cgroup = true;
  // A pooled or caller-given namespace has lo up already.
  plan_.loopback_up = !handed_netns;
  plan_.netns_from_handoff = handed_netns;
  // The descriptors are not in the plan: the spawn places them at the fixed
  // numbers the image names (init_image.h).
}

absl::StatusOr<RunResult> NativeBackend::Run(const PreparedRun& run, const RunControl& control) {
  if (auto warm = TryRunWarm(run, control)) return *std::move(warm);
  const InitPlan plan(run, seccomp_, netns_pool_ != nullptr || control.netns_fd >= 0);
  auto stdin_fd = os::MakeMemfdWithContents("stdin", run.spec->stdin_data);
  if (!stdin_fd.ok()) return stdin_fd.status();
  auto started = Spawn(plan, run.spec->limits, std::move(*stdin_fd), control.netns_fd);
  if (!started.ok()) return started.status();
  return Collect(plan, **started, run.spec->limits, control);
}

absl::StatusOr<std::unique_ptr<NativeBackend::StartedRun>> NativeBackend::Spawn(
    const InitPlan& plan, const Limits& limits, os::UniqueFd stdin_fd, int given_netns) {
  auto out = os::MakePipe();
  auto err = os::MakePipe();
  auto failure = os::MakePipe();
  auto status = os::MakePipe();
  for (auto* pipe : {&out, &err, &failure, &status}) {
    if (!pipe->ok()) return pipe->status();
  }
  auto handoff = os::MakeHandoffChannel();
  if (!handoff.ok()) return handoff.status();
  auto image = os::MakeMemfdWithContents("sandbox-plan", os::WriteInitImage(plan.plan()));
  if (!image.ok()) return image.status();

  const Clock::time_point started = Clock::now();
  const bool handed_netns = netns_pool_ != nullptr || given_netns >= 0;
  const int flags = kNamespaceFlags | (handed_netns ? 0 : CLONE_NEWNET);
  auto child = os::SpawnSandboxInit(
      flags, init_exe_.get(),
      {image->get(), stdin_fd.get(), out->write_end.get(), err->write_end.get(),
       failure->write_end.get(), status->write_end.get(), handoff->child_end.get()});
  if (!child.ok()) return child.status();
  // The child has its own copies now; close ours so EOF means "child done".
  image->reset();
  out->write_end.reset();
  err->write_end.reset();
  failure->write_end.reset();
  status->write_end.reset();
  stdin_fd.reset();
  handoff->child_end.reset();

  // While the init builds its filesystem: the run's cgroup and network
  // namespace, handed over when both are ready. From here `run` owns the
  // init and the cgroup, so an early return kills the init first.
  auto taken = cgroup_pool_.Take({limits.memory_bytes, limits.max_pids, 100});
  if (!taken.ok()) return taken.status();
  auto run =
      std::unique_ptr<StartedRun>(new StartedRun{LeasedCgroup(&cgroup_pool_, std::move(*taken)),
                                                 {},
                                                 std::move(out->read_end),
                                                 std::move(err->read_end),
                                                 std::move(failure->read_end),
                                                 std::move(status->read_end),
                                                 std::move(*child),
                                                 started});
  auto baseline = run->cgroup->ReadUsage();
  if (!baseline.ok()) return baseline.status();
  run->baseline = *baseline;
  os::UniqueFd netns;
  if (given_netns < 0 && netns_pool_) {
    auto made = netns_pool_->Take();
    if (!made.ok()) return made.status();
    netns = std::move(*made);
  }
  const int netns_fd = given_netns >= 0 ? given_netns : netns.get();
  if (auto st = HandOff(handoff->parent_end.get(), *run->cgroup, netns_fd); !st.ok()) {
    (void)run->child.Wait();  // the init may have failed first; its reason says more
    if (auto setup = SetupFailure(run->failure.get(), plan.plan()); !setup.ok()) return setup;
    return st;
  }
  for (int fd : {run->out.get(), run->err.get()}) {
    if (auto st = os::SetNonBlocking(fd); !st.ok()) return st;
  }
  return run;
}

absl::StatusOr<RunResult> NativeBackend::Collect(const InitPlan& plan, StartedRun& run,
                                                 const Limits& limits, const RunControl& control) {
  os::PumpOptions pump_options;
  pump_options.deadline = run.started + std::chrono::seconds(limits.wall_timeout_secs);
  pump_options.max_bytes_per_stream = limits.max_output_bytes;
  pump_options.cancel_fd = control.cancel_fd;
  auto pumped = os::PumpOutput(run.out.get(), run.err.get(), run.child, pump_options);
  if (!pumped.ok()) return pumped.status();
  if (auto waited = run.child.Wait(); !waited.ok()) return waited.status();
  const Clock::time_point finished = Clock::now();

  if (auto setup = SetupFailure(run.failure.get(), plan.plan()); !setup.ok()) return setup;
  os::ChildExitReport report{};
  const bool reported = ReadRecord(run.status.get(), report);
  const bool killed = pumped->end != os::PumpEnd::kExited;
  if (!reported && !killed) {
    return absl::InternalError("sandbox init exited without a report");
  }

  auto totals = run.cgroup->ReadUsage();
  if (!totals.ok()) return totals.status();
  const os::CgroupUsage usage = os::CgroupUsageDelta(run.baseline, *totals);

  RunResult result;
  result.stdout_data = std::move(pumped->out.data);
  result.stderr_data = std::move(pumped->err.data);
  result.stdout_truncated = pumped->out.truncated;
  result.stderr_truncated = pumped->err.truncated;
  result.wall_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(finished - run.started).count();
  result.cpu_ms = static_cast<int64_t>(usage.cpu_ns / 1'000'000);
  result.max_rss_kb = reported ? report.usage.ru_maxrss : 0;

  RunFacts facts;
  // A run killed before its program finished has no report: SIGKILL.
  facts.wait_status = reported ? report.wait_status : SIGKILL;
  facts.wall_timeout = pumped->end == os::PumpEnd::kDeadline;
  facts.cancelled = pumped->end == os::PumpEnd::kCancelled;
  facts.stage_cpu_ms =
      reported ? TimevalMs(report.usage.ru_utime) + TimevalMs(report.usage.ru_stime) : 0;
  facts.cpu_limit_secs = plan.cpu_limit_secs();
  facts.oom_kills = usage.oom_kills;
  facts.pids_max_events = usage.pids_max_events;
  facts.output_truncated = result.stdout_truncated || result.stderr_truncated;
  ApplyVerdict(facts, result);
  return result;
}

}  // namespace aevatar::sandbox
