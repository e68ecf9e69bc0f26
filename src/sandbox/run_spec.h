#ifndef AEVATAR_SANDBOX_RUN_SPEC_H_
#define AEVATAR_SANDBOX_RUN_SPEC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aevatar::sandbox {

enum class Language { kPython, kJavaScript, kTypeScript, kBash };

// Returns the language for "python", "javascript", "typescript" or "bash".
std::optional<Language> ParseLanguage(std::string_view name);
std::string_view LanguageName(Language language);

// Per-run limits. The defaults are the service defaults; an operator sets
// maxima (EngineOptions::max_limits) that a caller's request may not exceed.
struct Limits {
  int wall_timeout_secs = 180;             // accepted 1..600
  int cpu_secs = 0;                        // RLIMIT_CPU per process; 0 = the wall timeout
  uint64_t memory_bytes = 512ull << 20;    // cgroup memory (and swap) limit
  uint32_t max_pids = 128;                 // cgroup pids limit (threads count)
  uint64_t max_output_bytes = 1ull << 20;  // captured per stream; the rest is discarded
  uint64_t max_file_bytes = 64ull << 20;   // RLIMIT_FSIZE
  uint64_t tmpfs_bytes = 256ull << 20;     // size of each of /tmp and /workspace
  uint32_t max_open_files = 1024;          // RLIMIT_NOFILE

  bool operator==(const Limits&) const = default;
};

// The RLIMIT_CPU soft limit of a run: the explicit cpu_secs, else one second
// past the wall timeout (CPU of a multi-threaded program can outrun wall
// time, and the wall deadline must be what ends such a run).
int EffectiveCpuLimitSecs(const Limits& limits);

enum class BackendKind { kNative, kGvisor };
std::optional<BackendKind> ParseBackend(std::string_view name);
std::string_view BackendName(BackendKind kind);

struct EnvVar {
  std::string name;
  std::string value;
};

// A file the server shows read-only (nosuid, nodev) inside the sandbox:
// either a host file bound there (`host_path`, e.g. the Codex binary) or
// bytes written there (`contents`, e.g. the Codex home template); exactly
// one of the two. `sandbox_path` is absolute and lies under /opt/ (see
// ValidateServerFiles); its parent directories are made in the sandbox's
// root.
struct ServerFile {
  std::string host_path;
  std::string sandbox_path;
  std::shared_ptr<const std::string> contents;
};

// One run, as the caller asked for it.
struct RunSpec {
  Language language = Language::kPython;
  // The runtime environment (runtime_env.h) to run in, by name; empty: the
  // language's default. The engine resolves it against its declared ones.
  std::string runtime;
  std::string source;       // written into /workspace as a file, never onto a command line
  std::string stdin_data;   // the program's stdin
  std::vector<EnvVar> env;  // caller environment; validated by ValidateCallerEnv
  // Variables the server itself grants (NYXID_API_KEY, …). Never from callers:
  // only trusted code fills this, and these names win over caller names.
  std::vector<EnvVar> server_env;
  // Host files the server makes visible read-only. Never from callers.
  std::vector<ServerFile> server_files;
  // Directories directly in /workspace (names, e.g. ".aevatar") that are a
  // tmpfs of their own, owned by the program, sized like /workspace. Under
  // gVisor the workspace is a host directory, and every file operation there
  // is a round trip to the gofer; in such a directory it stays in the
  // sandbox's memory. Never from callers (see ValidateMemoryDirs).
  std::vector<std::string> memory_dirs;
  Limits limits;
  BackendKind backend = BackendKind::kNative;
};

// Typed outcome of a run that the sandbox carried out. A failure of the
// sandbox itself is never a verdict: it is a Status error.
enum class Verdict {
  kOk,             // exited 0
  kNonzeroExit,    // exited with another code
  kSignaled,       // killed by a signal no limit explains
  kWallTimeout,    // the wall deadline passed; every process was killed
  kCpuLimit,       // RLIMIT_CPU (SIGXCPU / SIGKILL past the hard limit)
  kMemoryLimit,    // the cgroup OOM killer took a process
  kOutputLimit,    // stdout or stderr exceeded the capture limit
  kPidsLimit,      // a fork or thread was refused by the pids limit
  kFileSizeLimit,  // RLIMIT_FSIZE (SIGXFSZ)
};
std::string_view VerdictName(Verdict verdict);

struct RunResult {
  int exit_code = 0;  // the exit code, or 128 + signal when signalled
  int signal = 0;     // 0 unless signalled
  Verdict verdict = Verdict::kOk;
  bool cancelled = false;  // killed because the caller cancelled the run
  std::string stdout_data;
  std::string stderr_data;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  int64_t wall_ms = 0;
  int64_t cpu_ms = 0;
  int64_t max_rss_kb = 0;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_RUN_SPEC_H_
