#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/errno_error.h"
#include "base/utf8.h"
#include "os/atomic_file.h"
#include "sandbox/native_backend.h"
#include "sandbox/native_run_parts.h"
#include "sandbox/warm_python.h"

// The native backend's warm Python sandboxes (warm_python.h).
namespace aevatar::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

// A warm interpreter's stdin pipe holds a whole program and its stdin, so
// the dispatch is one write that never waits on the interpreter.
constexpr int kWarmPipeBytes = 1 << 20;

// Enough for a /proc/PID/syscall line or the cgroup.procs of a waiting
// sandbox (its init and one interpreter).
constexpr size_t kMaxProcFileBytes = 4096;

// The text of a small kernel file ("" if it cannot be read).
std::string ReadProcFile(const std::string& path) {
  return os::ReadSmallFile(path, kMaxProcFileBytes).value_or("");
}

// The pids listed in a cgroup.procs file.
std::vector<pid_t> ProcsIn(const std::string& procs_file) {
  std::vector<pid_t> pids;
  std::istringstream lines(ReadProcFile(procs_file));
  for (long pid; lines >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// Whether process `pid` is blocked in read(2) on its stdin, as
// /proc/PID/syscall says ("<nr> 0x0 …"; the service is root, so it may read
// it): a warm interpreter that has finished starting up.
bool BlockedReadingStdin(pid_t pid) {
  std::istringstream fields(ReadProcFile("/proc/" + std::to_string(pid) + "/syscall"));
  long number = -1;
  std::string fd;
  return static_cast<bool>(fields >> number >> fd) && number == SYS_read && fd == "0x0";
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
         source.find('\0') == std::string_view::npos && base::IsValidUtf8(source);
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

// A warm sandbox: its init's plan (which points into the WarmProfile), the
// started init whose interpreter blocks reading its stdin, and that stdin's
// write end. Members go in reverse order: a sandbox let go is killed before
// its pipe closes, so a program it may hold part of never runs.
struct NativeBackend::WarmRun {
  std::unique_ptr<InitPlan> plan;
  os::UniqueFd program_in;  // holds kWarmPipeBytes without a reader
  std::unique_ptr<StartedRun> run;
};

// The run every warm sandbox is started for: the profile's spec and
// environment, with the interpreter told to wait for its program.
struct NativeBackend::WarmProfile {
  RunSpec spec;
  PreparedRun prepared;
};

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
          warm_pool_->failures() + warm_lost_.load(std::memory_order_relaxed)};
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
  // Ready once the interpreter has started and waits on its stdin: a run
  // that takes it pays none of the start-up, and from then on the sandbox
  // holds all its processes, so a full pool looks the same from the host
  // each time (the security suite compares process counts around runs).
  const std::string procs = warm->run->cgroup->ProcsFiles().at(0);
  const pid_t init = warm->run->child.pid();
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
  for (;;) {
    const std::vector<pid_t> pids = ProcsIn(procs);
    if (std::any_of(pids.begin(), pids.end(),
                    [&](pid_t pid) { return pid != init && BlockedReadingStdin(pid); })) {
      return warm;
    }
    if (warm->run->child.HasExited() || Clock::now() > give_up) {
      return absl::InternalError("a warm sandbox's interpreter did not start");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

bool NativeBackend::FitsWarm(const PreparedRun& run, int given_netns) const {
  if (!warm_pool_) return false;
  const RunSpec& spec = *run.spec;
  return spec.language == Language::kPython && spec.runtime.empty() && spec.server_files.empty() &&
         spec.memory_dirs.empty() && given_netns < 0 && spec.limits == warm_profile_->spec.limits &&
         run.envp == warm_profile_->prepared.envp &&
         8 + spec.source.size() + spec.stdin_data.size() <= kWarmPipeBytes &&
         ReadsAlikeFromBytes(spec.source);
}

std::unique_ptr<NativeBackend::WarmRun> NativeBackend::TakeWarm(const PreparedRun& run,
                                                                const RunControl& control) {
  if (!FitsWarm(run, control.netns_fd)) return nullptr;
  // An interpreter that died while it waited (killed from outside) ends its
  // init too (the last stage is over): such a sandbox is let go, counted as
  // a failure, and the next one tried. One that dies after this check takes
  // the write with it (EPIPE: the init keeps no reader), and the run starts
  // cold.
  for (;;) {
    std::unique_ptr<WarmRun> warm = warm_pool_->Take();
    if (!warm || !warm->run->child.HasExited()) return warm;
    warm_lost_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::optional<absl::StatusOr<RunResult>> NativeBackend::TryRunWarm(const PreparedRun& run,
                                                                   const RunControl& control) {
  std::unique_ptr<WarmRun> warm = TakeWarm(run, control);
  if (!warm) return std::nullopt;
  warm->run->started = Clock::now();
  // Its CPU counts from here: the interpreter's start-up is not the run's.
  auto baseline = warm->run->cgroup->ReadUsage();
  if (!baseline.ok() || !WriteToWarmPipe(warm->program_in.get(),
                                         WarmPythonInput(run.spec->source, run.spec->stdin_data))) {
    warm_lost_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;  // that sandbox died while it waited: the run starts cold
  }
  warm->run->baseline = *baseline;
  warm->program_in.reset();
  warm_served_.fetch_add(1, std::memory_order_relaxed);
  return Collect(*warm->plan, *warm->run, run.spec->limits, control);
}

}  // namespace aevatar::sandbox
