#ifndef AEVATAR_SANDBOX_GVISOR_RUNSC_H_
#define AEVATAR_SANDBOX_GVISOR_RUNSC_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "os/output_pump.h"

namespace aevatar::sandbox {

// Telling the program's exit apart from runsc's own failure.
//
// `runsc run` exits with the container's status, 128 + signal for a signal,
// and 128 for its own failures, so its exit code alone is ambiguous (exit 137
// vs SIGKILL, exit 128 vs a bad config). runsc's info-level log of the `run`
// command (--debug-log with --debug-command=run) is not: when the container
// ran to its end, runsc logs
//     "… main.go:…] Exiting with status: <raw wait status>"
// and when runsc itself failed it logs "FATAL ERROR: …" (and the error, as a
// JSON record, in the --log file) and never that line. When runsc cannot
// wait through the sandbox's control server, it logs so and waits on the
// sandbox process instead, whose exit status mirrors the container's. That
// happens when the sandbox exits right after the container (a benign race)
// and when the sandbox itself died (e.g. the OOM killer took a gVisor
// process: then the status is a signal). A crashing sentry writes its Go
// panic to the --panic-log file, which is otherwise empty.
// These texts are those of runsc release 20221219.

// What runsc's log of one `run` says.
struct RunscRunLog {
  std::optional<int> wait_status;  // the container's raw wait status, if it ran to its end
  bool waited_on_sandbox = false;  // runsc fell back to waiting on the sandbox process
};

// Parses the --debug-log file of a `runsc run` (see above).
RunscRunLog ParseRunscRunLog(std::string_view debug_log);

// Returns runsc's error message(s) from its JSON --log file (the "msg"
// fields, joined by "; "), or the file's text when it is not JSON; at most
// a few hundred bytes.
std::string ParseRunscErrorLog(std::string_view error_log);

// What happened to one container.
struct ContainerOutcome {
  os::PumpResult output;      // stdout/stderr of the container, and how pumping ended
  int runsc_wait_status = 0;  // of the `runsc run` process itself
  RunscRunLog log;
  std::string runsc_error;       // runsc's own error text, when it logged one
  bool sentry_panicked = false;  // the panic log is not empty: gVisor itself crashed
};

// One run's use of runsc: a private state root (--root) and log directory,
// ptrace platform, no network (--network=none) unless `host_network`:
// then --network=host, and the sandbox uses the host sockets of the network
// namespace its OCI config names (a caller-made one, never the service's).
// Not thread-safe; each run has its own.
class Runsc {
 public:
  Runsc(std::string runsc_path, std::string state_dir, std::string log_dir,
        bool host_network = false)
      : runsc_path_(std::move(runsc_path)),
        state_dir_(std::move(state_dir)),
        log_dir_(std::move(log_dir)),
        host_network_(host_network) {}

  // Runs container `id` from the bundle in `bundle_dir` with `stdin_data` as
  // its stdin, pumping its output under `pump` (deadline, output cap,
  // cancel_fd; at the deadline or on cancel the runsc process is killed).
  // Does not clean up after a killed or failed container: see ForceDelete.
  // Returns an error only when the host side failed (pipes, spawn, poll).
  absl::StatusOr<ContainerOutcome> Run(const std::string& bundle_dir, const std::string& id,
                                       std::string_view stdin_data, const os::PumpOptions& pump);

  // Makes sure container `id` is gone: `runsc kill <id> KILL`, then
  // `runsc delete --force <id>`, each bounded by a short deadline. A
  // container that no longer exists is not an error.
  absl::Status ForceDelete(const std::string& id);

 private:
  // The flags every runsc command of this run starts with.
  std::vector<std::string> BaseArgv(const std::string& log_name) const;

  const std::string runsc_path_;
  const std::string state_dir_;
  const std::string log_dir_;
  const bool host_network_;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_GVISOR_RUNSC_H_
