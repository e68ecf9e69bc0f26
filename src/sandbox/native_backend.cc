#include "sandbox/native_backend.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/errno_error.h"
#include "os/child_handoff.h"
#include "os/init_image.h"
#include "os/init_spawn.h"
#include "os/output_pump.h"
#include "os/precompiled_seccomp_policy.h"
#include "os/process.h"
#include "os/unique_fd.h"
#include "sandbox/result_json.h"
#include "sandbox/rootfs_plan.h"
#include "sandbox/verdict.h"
#include "sandbox/warm_python.h"

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

// A warm interpreter's stdin pipe holds a whole program and its stdin, so
// the dispatch is one write that never waits on the interpreter.
constexpr int kWarmPipeBytes = 1 << 20;

// The number of lines in file `path` (0 if it cannot be read).
size_t CountLines(const std::string& path) {
  std::ifstream file(path);
  return static_cast<size_t>(
      std::count(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>(), '\n'));
}

// Whether Python compiles `source` from bytes (the warm start-up's
// compile()) exactly as from its file (a cold start). The two word some
// errors differently: a source that is not UTF-8, one with a NUL byte, and
// one whose encoding declaration (PEP 263: "coding" in a comment of its first
// two lines) does not fit its bytes. Such programs start cold.
bool ReadsAlikeFromBytes(std::string_view source) {
  size_t first_two_lines = source.find('\n');
  if (first_two_lines != std::string_view::npos) {
    first_two_lines = source.find('\n', first_two_lines + 1);
  }
  return source.substr(0, first_two_lines).find("coding") == std::string_view::npos &&
         source.find('\0') == std::string_view::npos && IsValidUtf8(source);
}

// Writes all of `bytes` in one go to an empty non-blocking pipe whose
// reader may be gone: false then, with the SIGPIPE that write raised taken
// back, since a service thread must not die of a sandbox that did.
bool WriteToWarmPipe(int fd, std::string_view bytes) {
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  ssize_t n;
  do {
    n = ::write(fd, bytes.data(), bytes.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EPIPE) {
    const timespec now{};
    while (::sigtimedwait(&pipe_signal, nullptr, &now) == SIGPIPE) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return n == static_cast<ssize_t>(bytes.size());
}

}  // namespace

// Types the NativeBackend's nested classes hold: named, not anonymous, so
// those classes' linkage stays external (GCC's -Wsubobject-linkage).
namespace native_internal {

// argv/envp as the NULL-terminated char* arrays execve wants; points into the
// owning strings, which must outlive it.
struct CArgv {
  explicit CArgv(const std::vector<std::string>& items) {
    for (const auto& item : items) ptrs.push_back(const_cast<char*>(item.c_str()));
    ptrs.push_back(nullptr);
  }
  std::vector<char*> ptrs;
};

// A run cgroup taken from the pool, given back when this goes.
class LeasedCgroup {
 public:
  LeasedCgroup(os::CgroupPool* pool, std::unique_ptr<os::RunCgroup> cgroup)
      : pool_(pool), cgroup_(std::move(cgroup)) {}
  LeasedCgroup(LeasedCgroup&& other) = default;
  LeasedCgroup& operator=(LeasedCgroup&&) = delete;
  ~LeasedCgroup() {
    if (cgroup_) pool_->GiveBack(std::move(cgroup_));
  }
  os::RunCgroup& operator*() const { return *cgroup_; }
  os::RunCgroup* operator->() const { return cgroup_.get(); }

 private:
  os::CgroupPool* pool_;
  std::unique_ptr<os::RunCgroup> cgroup_;
};

}  // namespace native_internal

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

// Everything the init is told, built before the clone: the rootfs steps,
// rlimits and argv/envp arrays, and the plan that points into them (so an
// InitPlan stays where it was made).
class NativeBackend::InitPlan {
 public:
  InitPlan(const PreparedRun& run, const os::SeccompProgram& seccomp, bool handed_netns)
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
  InitPlan(const InitPlan&) = delete;
  InitPlan& operator=(const InitPlan&) = delete;

  const os::ChildPlan& plan() const { return plan_; }
  int cpu_limit_secs() const { return static_cast<int>(rlimits_[0].soft); }  // RLIMIT_CPU

 private:
  const RootfsPlan rootfs_;
  const std::vector<os::ChildRlimit> rlimits_;
  const CArgv envp_;
  std::vector<CArgv> argvs_;
  std::vector<os::ChildStage> stages_;
  os::ChildPlan plan_{};
};

// A started init and what the engine keeps of it until the run is collected.
// The cgroup comes first so that it is given back after the init is gone
// (members are destroyed in reverse order); on an error the init is killed
// (ChildProcess) before the cgroup goes back.
struct NativeBackend::StartedRun {
  LeasedCgroup cgroup;
  os::CgroupUsage baseline;                // a recycled cgroup's counters run on
  os::UniqueFd out, err, failure, status;  // read ends
  os::ChildProcess child;
  Clock::time_point started;
};

// A warm sandbox: its init's plan (which points into the WarmProfile), the
// started init whose interpreter blocks reading its stdin, and that stdin's
// write end. Members go in reverse order: closing the pipe first lets the
// interpreter leave by itself before the init is killed.
struct NativeBackend::WarmRun {
  std::unique_ptr<InitPlan> plan;
  std::unique_ptr<StartedRun> run;
  os::UniqueFd program_in;  // holds kWarmPipeBytes without a reader
};

// The run every warm sandbox is started for: the profile's spec and
// environment, with the interpreter told to wait for its program.
struct NativeBackend::WarmProfile {
  RunSpec spec;
  PreparedRun prepared;
};

absl::StatusOr<RunResult> NativeBackend::Run(const PreparedRun& run, const RunControl& control) {
  if (std::unique_ptr<WarmRun> warm = TakeWarm(run, control)) {
    warm->run->started = Clock::now();
    // Its usage counts from here: the interpreter's start-up is not the run's.
    auto baseline = warm->run->cgroup->ReadUsage();
    if (baseline.ok() && WriteToWarmPipe(warm->program_in.get(),
                                         WarmPythonInput(run.spec->source, run.spec->stdin_data))) {
      warm->run->baseline = *baseline;
      warm->program_in.reset();
      warm_served_.fetch_add(1, std::memory_order_relaxed);
      return Collect(*warm->plan, *warm->run, run.spec->limits, control);
    }
    // That sandbox died while it waited: the run starts cold instead.
  }
  const InitPlan plan(run, seccomp_, netns_pool_ != nullptr || control.netns_fd >= 0);
  auto stdin_fd = os::MakeMemfdWithContents("stdin", run.spec->stdin_data);
  if (!stdin_fd.ok()) return stdin_fd.status();
  auto started = Spawn(plan, run.spec->limits, std::move(*stdin_fd), control.netns_fd);
  if (!started.ok()) return started.status();
  return Collect(plan, **started, run.spec->limits, control);
}

void NativeBackend::KeepPythonWarm(const PreparedRun& profile, size_t count) {
  if (count == 0 || warm_pool_) return;
  warm_profile_ = std::make_unique<WarmProfile>(WarmProfile{*profile.spec, profile});
  PreparedRun& prepared = warm_profile_->prepared;
  prepared.spec = &warm_profile_->spec;
  warm_profile_->spec.source.clear();
  warm_profile_->spec.stdin_data.clear();
  // The interpreter writes the program itself, once it has it.
  prepared.runtime.stages.at(0).argv = WarmPythonArgv(prepared.runtime.source_path);
  prepared.runtime.source_path.clear();
  warm_pool_ = std::make_unique<ReadyPool<WarmRun>>(count, [this] { return SpawnWarm(); });
}

WarmPythonStats NativeBackend::warm_stats() const {
  if (!warm_pool_) return {};
  return {warm_pool_->ready(), warm_served_.load(std::memory_order_relaxed),
          warm_pool_->failures()};
}

absl::StatusOr<std::unique_ptr<NativeBackend::WarmRun>> NativeBackend::SpawnWarm() {
  auto warm = std::make_unique<WarmRun>();
  warm->plan =
      std::make_unique<InitPlan>(warm_profile_->prepared, seccomp_, netns_pool_ != nullptr);
  auto stdin_pipe = os::MakePipe();
  if (!stdin_pipe.ok()) return stdin_pipe.status();
  if (::fcntl(stdin_pipe->write_end.get(), F_SETPIPE_SZ, kWarmPipeBytes) < kWarmPipeBytes) {
    return base::ErrnoError("size a warm sandbox's stdin pipe", errno);
  }
  if (auto st = os::SetNonBlocking(stdin_pipe->write_end.get()); !st.ok()) return st;
  warm->program_in = std::move(stdin_pipe->write_end);
  auto started = Spawn(*warm->plan, warm_profile_->spec.limits, std::move(stdin_pipe->read_end),
                       /*given_netns=*/-1);
  if (!started.ok()) return started.status();
  warm->run = std::move(*started);
  // Ready once the interpreter exists: from then on the sandbox holds all
  // its processes, so a pool counted full looks the same from the host each
  // time (the security suite compares process counts around runs).
  const std::string procs = warm->run->cgroup->ProcsFiles().at(0);
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
  while (CountLines(procs) < 2) {
    if (warm->run->child.HasExited() || Clock::now() > give_up) {
      return absl::InternalError("a warm sandbox's interpreter did not start");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return warm;
}

std::unique_ptr<NativeBackend::WarmRun> NativeBackend::TakeWarm(const PreparedRun& run,
                                                                const RunControl& control) {
  if (!warm_pool_) return nullptr;
  const RunSpec& spec = *run.spec;
  const RunSpec& profile = warm_profile_->spec;
  const bool alike = spec.language == Language::kPython && spec.runtime.empty() &&
                     spec.server_files.empty() && spec.memory_dirs.empty() &&
                     control.netns_fd < 0 && spec.limits == profile.limits &&
                     run.envp == warm_profile_->prepared.envp &&
                     8 + spec.source.size() + spec.stdin_data.size() <= kWarmPipeBytes &&
                     ReadsAlikeFromBytes(spec.source);
  if (!alike) return nullptr;
  std::unique_ptr<WarmRun> warm = warm_pool_->Take();
  // An interpreter that died while it waited (killed from outside) has had
  // its init report and exit: its pipe would take the program and the run
  // would wrongly end as that death. Such a sandbox is let go.
  if (warm && warm->run->child.HasExited()) return nullptr;
  return warm;
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
