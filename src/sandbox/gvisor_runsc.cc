#include "sandbox/gvisor_runsc.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "os/process.h"
#include "os/unique_fd.h"

namespace aevatar::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kExitLine = "] Exiting with status: ";
constexpr std::string_view kWaitFallbackLine = "Will try waiting on the sandbox process instead";
constexpr size_t kMaxErrorText = 400;
constexpr size_t kMaxLogBytes = 1 << 20;
// `runsc kill` and `runsc delete --force` take well under a second; past
// this the run's cgroup teardown still kills whatever is left.
constexpr auto kHelperTimeout = std::chrono::seconds(10);

// runsc gets a fixed environment: nothing of the service's own (tokens, keys).
const std::vector<std::string>& RunscEnv() {
  static const std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  return env;
}

// Returns up to kMaxLogBytes of `path`, or "" when it does not exist.
std::string ReadLog(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string text(kMaxLogBytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

struct Spawned {
  os::ChildProcess child;
  os::Pipe out;
  os::Pipe err;
};

// Starts `argv` with stdin from a memfd holding `stdin_data` and stdout and
// stderr on fresh non-blocking pipes.
absl::StatusOr<Spawned> Spawn(const std::vector<std::string>& argv, std::string_view stdin_data) {
  auto out = os::MakePipe();
  if (!out.ok()) return out.status();
  auto err = os::MakePipe();
  if (!err.ok()) return err.status();
  auto stdin_fd = os::MakeMemfdWithContents("stdin", stdin_data);
  if (!stdin_fd.ok()) return stdin_fd.status();
  auto child = os::SpawnProgram(argv, RunscEnv(), stdin_fd->get(), out->write_end.get(),
                                err->write_end.get());
  if (!child.ok()) return child.status();
  // runsc and the sandbox hold the write ends now; ours would hide EOF.
  out->write_end.reset();
  err->write_end.reset();
  for (int fd : {out->read_end.get(), err->read_end.get()}) {
    if (auto st = os::SetNonBlocking(fd); !st.ok()) return st;
  }
  return Spawned{std::move(*child), std::move(*out), std::move(*err)};
}

}  // namespace

RunscRunLog ParseRunscRunLog(std::string_view debug_log) {
  RunscRunLog log;
  log.waited_on_sandbox = debug_log.find(kWaitFallbackLine) != std::string_view::npos;
  const size_t at = debug_log.rfind(kExitLine);
  if (at == std::string_view::npos) return log;
  const std::string_view rest = debug_log.substr(at + kExitLine.size());
  int status = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), status);
  const bool line_ends = end == rest.data() + rest.size() || *end == '\n' || *end == '\r';
  if (ec == std::errc() && line_ends && status >= 0) log.wait_status = status;
  return log;
}

std::string ParseRunscErrorLog(std::string_view error_log) {
  std::string text;
  while (!error_log.empty()) {
    const size_t eol = std::min(error_log.find('\n'), error_log.size());
    std::string_view line = error_log.substr(0, eol);
    error_log.remove_prefix(std::min(eol + 1, error_log.size()));
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.remove_suffix(1);
    }
    if (line.empty()) continue;
    // A line that is not a JSON record is kept as text; no exceptions leave here.
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!text.empty()) text += "; ";
    if (record.is_object() && record.contains("msg") && record["msg"].is_string()) {
      text += record["msg"].get<std::string>();
    } else {
      text += line;
    }
  }
  if (text.size() > kMaxErrorText) text = text.substr(0, kMaxErrorText) + "...";
  return text;
}

std::vector<std::string> Runsc::BaseArgv(const std::string& log_name) const {
  return {
      runsc_path_,
      "--root=" + state_dir_,
      // KVM hangs on the hosts we build on; ptrace works everywhere.
      "--platform=ptrace",
      host_network_ ? "--network=host" : "--network=none",
      // runsc's own errors go to a file of ours, never into the program's stderr.
      absl::StrCat("--log=", log_dir_, "/", log_name, ".log"),
      "--log-format=json",
  };
}

absl::StatusOr<ContainerOutcome> Runsc::Run(const std::string& bundle_dir, const std::string& id,
                                            std::string_view stdin_data,
                                            const os::PumpOptions& pump) {
  const std::string debug_log = absl::StrCat(log_dir_, "/", id, ".debug");
  std::vector<std::string> argv = BaseArgv(id);
  argv.insert(argv.end(), {
                              // A crashing sentry's Go dump is not the program's stderr.
                              absl::StrCat("--panic-log=", log_dir_, "/", id, ".panic"),
                              // The `run` command's info-level log: it holds the exit status
                              // line this backend relies on (see the header). No --debug: that
                              // would also log the spec, environment values included.
                              "--debug-log=" + debug_log,
                              "--debug-command=run",
                              "run",
                              "--bundle",
                              bundle_dir,
                              id,
                          });
  auto spawned = Spawn(argv, stdin_data);
  if (!spawned.ok()) return spawned.status();
  auto pumped = os::PumpOutput(spawned->out.read_end.get(), spawned->err.read_end.get(),
                               spawned->child, pump);
  if (!pumped.ok()) return pumped.status();
  auto waited = spawned->child.Wait();
  if (!waited.ok()) return waited.status();

  ContainerOutcome outcome;
  outcome.output = std::move(*pumped);
  outcome.runsc_wait_status = *waited;
  outcome.log = ParseRunscRunLog(ReadLog(debug_log));
  outcome.runsc_error = ParseRunscErrorLog(ReadLog(absl::StrCat(log_dir_, "/", id, ".log")));
  outcome.sentry_panicked = !ReadLog(absl::StrCat(log_dir_, "/", id, ".panic")).empty();
  return outcome;
}

absl::Status Runsc::ForceDelete(const std::string& id) {
  auto run_helper = [&](std::vector<std::string> argv) -> absl::StatusOr<int> {
    auto spawned = Spawn(argv, "");
    if (!spawned.ok()) return spawned.status();
    os::PumpOptions pump;
    pump.deadline = Clock::now() + kHelperTimeout;
    pump.max_bytes_per_stream = 4096;
    auto pumped = os::PumpOutput(spawned->out.read_end.get(), spawned->err.read_end.get(),
                                 spawned->child, pump);
    if (!pumped.ok()) return pumped.status();
    return spawned->child.Wait();
  };
  // Fails harmlessly when the sandbox is already gone (the usual case once
  // `runsc run` was killed: the sandbox dies with it).
  std::vector<std::string> kill = BaseArgv(id + ".kill");
  kill.insert(kill.end(), {"kill", id, "KILL"});
  if (auto killed = run_helper(std::move(kill)); !killed.ok()) return killed.status();

  std::vector<std::string> remove = BaseArgv(id + ".delete");
  remove.insert(remove.end(), {"delete", "--force", id});
  auto removed = run_helper(std::move(remove));
  if (!removed.ok()) return removed.status();
  if (*removed != 0) {
    return absl::InternalError(absl::StrCat(
        "runsc delete --force ", id,
        " failed: ", ParseRunscErrorLog(ReadLog(absl::StrCat(log_dir_, "/", id, ".delete.log")))));
  }
  return absl::OkStatus();
}

}  // namespace aevatar::sandbox
