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

// argv/envp as the NULL-terminated char* arrays execve wants; points into the
// owning strings, which must outlive it.
struct CArgv {
  explicit CArgv(const std::vector<std::string>& items) {
    for (const auto& item : items) ptrs.push_back(const_cast<char*>(item.c_str()));
    ptrs.push_back(nullptr);
  }
  std::vector<char*> ptrs;
};

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
  ssize_t n;
  do {
    n = ::read(fd, &record, sizeof(record));
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(record));
}

int64_t TimevalMs(const timeval& tv) { return tv.tv_sec * 1000 + tv.tv_usec / 1000; }

// The init's report of a failed set-up step, if it sent one (call once the
// init is gone: reads until EOF).
absl::Status SetupFailure(int error_pipe) {
  os::ChildFailure failure{};
  if (!ReadRecord(error_pipe, failure)) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("sandbox setup failed at ",
                                          os::ChildStepName(failure.step), " (", failure.index,
                                          "): ", strerror(failure.err)));
}

// Sends the init the run cgroup's cgroup.procs files, opened for writing, and
// the network namespace (-1: the clone made one).
absl::Status HandOff(int channel, os::RunCgroup& cgroup, int netns_fd) {
  auto procs = cgroup.JoinFds();
  if (!procs.ok()) return procs.status();
  return os::SendHandoff(channel, *procs, netns_fd);
}

}  // namespace

absl::StatusOr<std::unique_ptr<NativeBackend>> NativeBackend::Create(size_t prepared_namespaces,
                                                                     bool one_shot,
                                                                     const std::string& init_path) {
  if (::geteuid() != 0) {
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
      cgroup_pool_(cgroups_.get(), absl::StrCat("run-", ::getpid(), "-"), /*max_idle=*/8,
                   shared_cgroups) {}

absl::StatusOr<RunResult> NativeBackend::Run(const PreparedRun& run, const RunControl& control) {
  const RunSpec& spec = *run.spec;
  const Limits& limits = spec.limits;

  // The init's whole plan is built here and copied into an image for it.
  RootfsPlan rootfs(limits, run.runtime.source_path, spec.source);
  const std::vector<os::ChildRlimit> rlimits = BuildRlimits(limits);
  CArgv envp(run.envp);
  std::vector<CArgv> argvs;
  argvs.reserve(run.runtime.stages.size());
  std::vector<os::ChildStage> stages;
  for (const RuntimeStage& stage : run.runtime.stages) {
    argvs.emplace_back(stage.argv);
    stages.push_back({stage.path.c_str(), argvs.back().ptrs.data(), envp.ptrs.data()});
  }

  auto out = os::MakePipe();
  auto err = os::MakePipe();
  auto failure = os::MakePipe();
  auto status = os::MakePipe();
  for (auto* pipe : {&out, &err, &failure, &status}) {
    if (!pipe->ok()) return pipe->status();
  }
  auto stdin_fd = os::MakeMemfdWithContents("stdin", spec.stdin_data);
  if (!stdin_fd.ok()) return stdin_fd.status();
  auto handoff = os::MakeHandoffChannel();
  if (!handoff.ok()) return handoff.status();

  // Declared before the init so that it is given back after the init is gone
  // (destruction runs in reverse order); reused when the run left nothing.
  std::unique_ptr<os::RunCgroup> cgroup;
  struct GiveBackOnExit {
    os::CgroupPool& pool;
    std::unique_ptr<os::RunCgroup>& cgroup;
    ~GiveBackOnExit() { pool.GiveBack(std::move(cgroup)); }
  } give_back{cgroup_pool_, cgroup};

  os::ChildPlan plan{};
  plan.root_mount_point = kRootMountPoint;
  plan.root_mount_options = rootfs.root_options();
  plan.old_root_name = ".oldroot";
  plan.fs_steps = rootfs.steps().data();
  plan.fs_step_count = rootfs.steps().size();
  plan.hostname = "sandbox";
  plan.workdir = kWorkspaceDir;
  plan.uid = kSandboxUid;
  plan.gid = kSandboxGid;
  plan.rlimits = rlimits.data();
  plan.rlimit_count = rlimits.size();
  plan.stages = stages.data();
  plan.stage_count = stages.size();
  plan.seccomp = seccomp_.program();
  plan.unshare_cgroup = true;
  plan.loopback_up = !netns_pool_;  // a pooled namespace has lo up already
  plan.netns_from_handoff = netns_pool_ != nullptr;
  // The descriptors are not in the plan: the spawn places them at the fixed
  // numbers the image names (init_image.h).
  auto image = os::MakeMemfdWithContents("sandbox-plan", os::WriteInitImage(plan));
  if (!image.ok()) return image.status();

  const Clock::time_point started = Clock::now();
  const int flags = kNamespaceFlags | (netns_pool_ ? 0 : CLONE_NEWNET);
  auto child = os::SpawnSandboxInit(
      flags, init_exe_.get(),
      {image->get(), stdin_fd->get(), out->write_end.get(), err->write_end.get(),
       failure->write_end.get(), status->write_end.get(), handoff->child_end.get()});
  if (!child.ok()) return child.status();
  image->reset();
  // The child has its own copies now; close ours so EOF means "child done".
  out->write_end.reset();
  err->write_end.reset();
  failure->write_end.reset();
  status->write_end.reset();
  stdin_fd->reset();
  handoff->child_end.reset();

  // While the init builds its filesystem: the run's cgroup and network
  // namespace, handed over when both are ready. On an error the init is
  // killed (ChildProcess) before the cgroup goes back.
  auto taken = cgroup_pool_.Take({limits.memory_bytes, limits.max_pids, 100});
  if (!taken.ok()) return taken.status();
  cgroup = std::move(*taken);
  // A recycled cgroup's counters run on; the run's usage is the difference.
  auto baseline = cgroup->ReadUsage();
  if (!baseline.ok()) return baseline.status();
  os::UniqueFd netns;
  if (netns_pool_) {
    auto made = netns_pool_->Take();
    if (!made.ok()) return made.status();
    netns = std::move(*made);
  }
  if (auto st = HandOff(handoff->parent_end.get(), *cgroup, netns.get()); !st.ok()) {
    (void)child->Wait();  // the init may have failed first; its reason says more
    if (auto setup = SetupFailure(failure->read_end.get()); !setup.ok()) return setup;
    return st;
  }
  netns.reset();

  for (int fd : {out->read_end.get(), err->read_end.get()}) {
    if (auto st = os::SetNonBlocking(fd); !st.ok()) return st;
  }
  os::PumpOptions pump_options;
  pump_options.deadline = started + std::chrono::seconds(limits.wall_timeout_secs);
  pump_options.max_bytes_per_stream = limits.max_output_bytes;
  pump_options.cancel_fd = control.cancel_fd;
  auto pumped = os::PumpOutput(out->read_end.get(), err->read_end.get(), *child, pump_options);
  if (!pumped.ok()) return pumped.status();
  if (auto waited = child->Wait(); !waited.ok()) return waited.status();
  const Clock::time_point finished = Clock::now();

  if (auto setup = SetupFailure(failure->read_end.get()); !setup.ok()) return setup;
  os::ChildExitReport report{};
  const bool reported = ReadRecord(status->read_end.get(), report);
  const bool killed = pumped->end != os::PumpEnd::kExited;
  if (!reported && !killed) {
    return absl::InternalError("sandbox init exited without a report");
  }

  auto totals = cgroup->ReadUsage();
  if (!totals.ok()) return totals.status();
  const os::CgroupUsage usage = os::CgroupUsageDelta(*baseline, *totals);

  RunResult result;
  result.stdout_data = std::move(pumped->out.data);
  result.stderr_data = std::move(pumped->err.data);
  result.stdout_truncated = pumped->out.truncated;
  result.stderr_truncated = pumped->err.truncated;
  result.wall_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(finished - started).count();
  result.cpu_ms = static_cast<int64_t>(usage.cpu_ns / 1'000'000);
  result.max_rss_kb = reported ? report.usage.ru_maxrss : 0;

  RunFacts facts;
  // A run killed before its program finished has no report: SIGKILL.
  facts.wait_status = reported ? report.wait_status : SIGKILL;
  facts.wall_timeout = pumped->end == os::PumpEnd::kDeadline;
  facts.cancelled = pumped->end == os::PumpEnd::kCancelled;
  facts.stage_cpu_ms =
      reported ? TimevalMs(report.usage.ru_utime) + TimevalMs(report.usage.ru_stime) : 0;
  facts.cpu_limit_secs = static_cast<int>(rlimits[0].soft);
  facts.oom_kills = usage.oom_kills;
  facts.pids_max_events = usage.pids_max_events;
  facts.output_truncated = result.stdout_truncated || result.stderr_truncated;
  ApplyVerdict(facts, result);
  return result;
}

}  // namespace aevatar::sandbox
