// `nyxid node daemon run|start|status|stop|install --profile P`: the node's
// connection to NyxID as a background process (node_daemon.h).
//
// `run` holds an exclusive flock on the profile's daemon.pid for its life,
// so one profile has at most one daemon and `status`/`stop` learn whether it
// runs from the lock, never from a pid that may have been reused.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "base/json_read.h"
#include "base/log.h"
#include "cli/nyxid_commands.h"
#include "cli/operator_flags.h"
#include "cli/wait_for_signal.h"
#include "nyxid/node_agent/node_daemon.h"
#include "nyxid/node_agent/node_profile.h"
#include "os/atomic_file.h"
#include "os/unique_fd.h"

namespace aevatar::cli {
namespace {

namespace node = nyxid::node;

struct DaemonOptions {
  std::string profile;
  std::string log_level = "info";
  bool json = false;  // `--json`: one JSON document on stdout (`run`: JSON log lines)
};

int DaemonFail(const DaemonOptions& options, const std::string& message) {
  return ReportNyxidError(absl::FailedPreconditionError(message), options.json);
}

// `--json`'s document, or `text` for a terminal.
void Report(const DaemonOptions& options, const nlohmann::json& document, const std::string& text) {
  if (options.json) {
    std::cout << document.dump() << "\n";
  } else {
    std::cout << text;
  }
}

// The daemon's pid when one holds the profile's lock, else 0.
pid_t RunningDaemon(const node::NodeProfile& profile) {
  os::UniqueFd fd(::open(profile.PidPath().c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return 0;
  if (::flock(fd.get(), LOCK_SH | LOCK_NB) == 0) return 0;  // nobody holds it
  char text[32] = {};
  const ssize_t n = ::pread(fd.get(), text, sizeof(text) - 1, 0);
  return n > 0 ? static_cast<pid_t>(std::atol(text)) : 0;
}

nlohmann::json ReadState(const node::NodeProfile& profile) {
  auto text = os::ReadSmallFile(profile.StatePath(), 4096);
  if (!text.ok()) return nlohmann::json::object();
  auto doc = base::ParseJsonObject(*text);
  return doc.ok() ? *doc : nlohmann::json::object();
}

base::LogLevel LevelOf(const std::string& name) {
  if (name == "debug") return base::LogLevel::kDebug;
  if (name == "warn") return base::LogLevel::kWarn;
  if (name == "error") return base::LogLevel::kError;
  return base::LogLevel::kInfo;
}

int RunForeground(const DaemonOptions& options) {
  auto profile = node::LoadNodeProfile(options.profile);
  if (!profile.ok()) return ReportNyxidError(profile.status(), options.json);
  os::UniqueFd lock(::open(profile->PidPath().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (lock.get() < 0 || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    return DaemonFail(options, "a daemon already runs for profile " + options.profile);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock.get(), 0) != 0 ||
      ::pwrite(lock.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return DaemonFail(options, "cannot write " + profile->PidPath());
  }
  base::ConfigureLog(LevelOf(options.log_level), 2);
  BlockStopSignals();
  node::NodeDaemon daemon(options.profile);
  std::thread stopper([&daemon] {
    WaitForStopSignal();
    daemon.Stop();
  });
  const int code = daemon.Run();
  if (code != 0) {
    // The profile could not be read: the stopper still waits for a signal.
    ::kill(::getpid(), SIGTERM);
  }
  stopper.join();
  return code;
}

// Starts `run` detached (double fork, new session, output to daemon.log) and
// waits up to 10 s for it to come online.
int RunStart(const DaemonOptions& options) {
  auto profile = node::LoadNodeProfile(options.profile);
  if (!profile.ok()) return ReportNyxidError(profile.status(), options.json);
  if (pid_t pid = RunningDaemon(*profile)) {
    Report(options,
           {{"profile", options.profile}, {"pid", pid}, {"state", "running"}, {"started", false}},
           "the daemon of profile " + options.profile + " already runs (pid " +
               std::to_string(pid) + ")\n");
    return 0;
  }
  (void)::unlink(profile->StatePath().c_str());
  const pid_t first = ::fork();
  if (first < 0) return DaemonFail(options, "fork failed");
  if (first == 0) {
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    const int log = ::open(profile->LogPath().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    const int null = ::open("/dev/null", O_RDONLY);
    if (log < 0 || null < 0) ::_exit(127);
    ::dup2(null, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    const std::string level = "--log-level=" + options.log_level;
    ::execl("/proc/self/exe", "nyxid", "node", "daemon", "run", "--profile",
            options.profile.c_str(), level.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::waitpid(first, nullptr, 0);
  for (int i = 0; i < 100; ++i) {
    const nlohmann::json state = ReadState(*profile);
    if (base::StringOr(state, "state", "") == "online") {
      const int64_t pid = base::IntOr(state, "pid", 0);
      Report(options,
             {{"profile", options.profile}, {"pid", pid}, {"state", "online"}, {"started", true}},
             "the daemon of profile " + options.profile + " is online (pid " + std::to_string(pid) +
                 ")\n");
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const nlohmann::json state = ReadState(*profile);
  if (RunningDaemon(*profile) == 0) {
    return DaemonFail(options, "the daemon did not start; see " + profile->LogPath());
  }
  const std::string now = base::StringOr(state, "state", "?");
  const std::string last_error = base::StringOr(state, "last_error", "");
  Report(options,
         {{"profile", options.profile},
          {"pid", RunningDaemon(*profile)},
          {"state", now},
          {"started", true},
          {"last_error", last_error}},
         "the daemon runs but is not online yet: " + now + " (" +
             (last_error.empty() ? "no error yet" : last_error) + "); it keeps retrying\n");
  return 0;
}

int RunStatus(const DaemonOptions& options) {
  auto profile = node::LoadNodeProfile(options.profile);
  if (!profile.ok()) return ReportNyxidError(profile.status(), options.json);
  const pid_t pid = RunningDaemon(*profile);
  nlohmann::json state = ReadState(*profile);
  nlohmann::json out = {{"profile", options.profile},
                        {"running", pid != 0},
                        {"pid", pid},
                        {"state", pid != 0 ? base::StringOr(state, "state", "unknown") : "stopped"},
                        {"node_id", profile->node_id}};
  if (state.contains("last_error") && pid != 0) out["last_error"] = state["last_error"];
  std::cout << out.dump() << "\n";
  return pid != 0 ? 0 : 3;  // 3: not running, as `systemctl status` says it
}

int RunStop(const DaemonOptions& options) {
  auto profile = node::LoadNodeProfile(options.profile);
  if (!profile.ok()) return ReportNyxidError(profile.status(), options.json);
  const pid_t pid = RunningDaemon(*profile);
  if (pid == 0) {
    Report(options, {{"profile", options.profile}, {"was_running", false}, {"running", false}},
           "the daemon of profile " + options.profile + " is not running\n");
    return 0;
  }
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 100 && RunningDaemon(*profile) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (RunningDaemon(*profile) != 0) ::kill(pid, SIGKILL);
  Report(options, {{"profile", options.profile}, {"was_running", true}, {"running", false}},
         "stopped the daemon of profile " + options.profile + "\n");
  return 0;
}

// A systemd unit where systemd runs; otherwise says so (`start` works
// without it).
int RunInstall(const DaemonOptions& options) {
  auto profile = node::LoadNodeProfile(options.profile);
  if (!profile.ok()) return ReportNyxidError(profile.status(), options.json);
  struct stat st {};
  if (::stat("/run/systemd/system", &st) != 0) {
    Report(options, {{"profile", options.profile}, {"systemd", false}, {"unit", nullptr}},
           "systemd does not run on this host: no unit written. Run the daemon with: nyxid node "
           "daemon start --profile " +
               options.profile + "\n");
    return 0;
  }
  char self[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return DaemonFail(options, "cannot find this program's path");
  const bool root = ::geteuid() == 0;
  const char* home = std::getenv("HOME");
  const std::string dir =
      root ? "/etc/systemd/system" : std::string(home ? home : "") + "/.config/systemd/user";
  const std::string unit = "nyxid-node-" + options.profile + ".service";
  const std::string text =
      "[Unit]\nDescription=NyxID node (profile " + options.profile +
      ")\nAfter=network-online.target\nWants=network-online.target\n\n[Service]\nExecStart=" +
      std::string(self, static_cast<size_t>(n)) + " node daemon run --profile " + options.profile +
      " --log-level=" + options.log_level +
      "\nRestart=always\nRestartSec=5\nNoNewPrivileges=yes\nPrivateTmp=yes\n\n[Install]"
      "\nWantedBy=" +
      (root ? "multi-user.target" : "default.target") + "\n";
  if (absl::Status made = os::MakeDirectories(dir, 0755); !made.ok()) {
    return DaemonFail(options, std::string(made.message()));
  }
  if (absl::Status written = os::WriteFileAtomically(dir + "/" + unit, text, 0644); !written.ok()) {
    return DaemonFail(options, std::string(written.message()));
  }
  Report(options, {{"profile", options.profile}, {"systemd", true}, {"unit", dir + "/" + unit}},
         "wrote " + dir + "/" + unit + "\nenable it: systemctl " + (root ? "" : "--user ") +
             "enable --now " + unit + "\n");
  return 0;
}

}  // namespace

void AddNyxidNodeDaemonCommands(CLI::App& nodes, NyxidGlobalOptions& global, int& exit_code) {
  CLI::App* daemon = nodes.add_subcommand("daemon", "the node's connection to NyxID");
  daemon->require_subcommand(1);
  auto options = std::make_shared<DaemonOptions>();
  using Runner = int (*)(const DaemonOptions&);
  const std::pair<const char*, std::pair<const char*, Runner>> commands[] = {
      {"run", {"run in the foreground", RunForeground}},
      {"start", {"start in the background", RunStart}},
      {"status", {"whether it runs and is online", RunStatus}},
      {"stop", {"stop it", RunStop}},
      {"install", {"write a systemd unit for it", RunInstall}},
  };
  for (const auto& [name, what] : commands) {
    CLI::App* command = daemon->add_subcommand(name, what.first);
    command->add_option("--profile", options->profile,
                        "profile name (default $NYXID_PROFILE or default)");
    command->add_option("--log-level", options->log_level, "debug, info, warn or error")
        ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
    // `run` is a foreground server: its --json is JSON log lines (the default
    // shape; AddLogFormatFlag). The others print one JSON document.
    if (std::string_view(name) == "run") AddLogFormatFlag(command);
    command->callback([&global, &exit_code, options, run = what.second] {
      DaemonOptions resolved = *options;
      resolved.profile = NodeProfileName(options->profile);
      resolved.json = global.json();
      exit_code = run(resolved);
    });
  }
}

}  // namespace aevatar::cli
