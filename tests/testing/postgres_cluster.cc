#include "testing/postgres_cluster.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "testing/loopback_port.h"
#include "testing/poll.h"
#include "testing/proc_file.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kSuperuser[] = "aevatar_test";
constexpr char kServerUser[] = "postgres";

// The newest /usr/lib/postgresql/NN/bin holding a server, or "".
std::string FindServerBinDir() {
  std::error_code ec;
  int best = -1;
  std::string found;
  for (const fs::directory_entry& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string bin = (entry.path() / "bin").string();
    const int version = std::atoi(entry.path().filename().c_str());
    if (version > best && ::access((bin + "/postgres").c_str(), X_OK) == 0 &&
        ::access((bin + "/initdb").c_str(), X_OK) == 0) {
      best = version;
      found = bin;
    }
  }
  return found;
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

PostgresCluster::PostgresCluster() : bin_dir_(FindServerBinDir()) {
  if (bin_dir_.empty()) {
    error_ = "PostgreSQL's server is not installed (scripts/setup installs `postgresql`)";
    return;
  }
  // Under /tmp, not TMPDIR: the postgres user must be able to reach it.
  std::string tmpl = "/tmp/aevatar-pg.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    error_ = "mkdtemp failed";
    return;
  }
  dir_ = tmpl;
  fs::create_directory(dir_ + "/logs");  // the commands' output, written by this process
  if (::geteuid() == 0) {
    const passwd* user = ::getpwnam(kServerUser);
    if (user == nullptr || ::chown(dir_.c_str(), user->pw_uid, user->pw_gid) != 0) {
      error_ = "running as root needs the `postgres` user (the postgresql package makes it)";
      return;
    }
  }
  if (InitDb()) Start();
}

PostgresCluster::~PostgresCluster() {
  if (pid_ > 0) {
    ::kill(pid_, SIGINT);  // fast shutdown: ends sessions, then exits
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::string PostgresCluster::ServerCommand(const std::string& args) const {
  std::string prefix;
  if (::geteuid() == 0) {
    prefix = std::string("setpriv --reuid ") + kServerUser + " --regid " + kServerUser +
             " --init-groups ";
  }
  return prefix + bin_dir_ + "/" + args;
}

bool PostgresCluster::InitDb() {
  const ShellRun run = RunShell(
      dir_ + "/logs", ServerCommand("initdb -D " + Quoted(dir_ + "/data") + " -U " + kSuperuser +
                                    " -A trust -E UTF8 --locale=C --no-sync --no-instructions"));
  if (run.exit_code != 0) {
    error_ = "initdb failed: " + run.err + run.out;
    return false;
  }
  return true;
}

bool PostgresCluster::Start() {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (Launch(FreeLoopbackPort())) return true;
  }
  error_ = "postgres did not start: " + ReadProcFile(dir_ + "/logs/postgres.log");
  return false;
}

bool PostgresCluster::Launch(uint16_t port) {
  const std::string log = dir_ + "/logs/postgres.log";
  const std::string command =
      ServerCommand("postgres -D " + Quoted(dir_ + "/data") + " -p " + std::to_string(port) +
                    " -k " + Quoted(dir_) +
                    " -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off"
                    " -c full_page_writes=off -c max_connections=200");
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    // exec, so the server (setpriv execs it in turn) keeps this pid.
    const std::string exec_command = "exec " + command;
    ::execl("/bin/sh", "sh", "-c", exec_command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  if (pid < 0) return false;
  bool exited = false;
  const std::string probe =
      bin_dir_ + "/pg_isready -q -h 127.0.0.1 -p " + std::to_string(port) + " -U " + kSuperuser;
  const bool ready = PollUntil([&] {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {  // it exited: the port was taken
      exited = true;
      return true;
    }
    return std::system(probe.c_str()) == 0;
  });
  if (ready && !exited) {
    pid_ = pid;
    port_ = port;
    return true;
  }
  if (!exited) {  // neither ready nor gone: stop it before retrying
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  return false;
}

bool PostgresCluster::Restart() {
  if (pid_ <= 0) return false;
  ::kill(pid_, SIGINT);  // fast shutdown: every session is cut
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (Launch(port_)) return true;
  }
  error_ = "postgres did not restart: " + ReadProcFile(dir_ + "/logs/postgres.log");
  return false;
}

std::string PostgresCluster::Url(const std::string& name) const {
  return std::string("postgresql://") + kSuperuser + "@127.0.0.1:" + std::to_string(port_) + "/" +
         name;
}

std::string PostgresCluster::CreateDatabase() {
  if (!ok()) return "";
  const std::string name = "test_" + std::to_string(next_database_++);
  const ShellRun run =
      RunShell(dir_ + "/logs", bin_dir_ + "/createdb -h 127.0.0.1 -p " + std::to_string(port_) +
                                   " -U " + kSuperuser + " " + name);
  if (run.exit_code != 0) {
    error_ = "createdb failed: " + run.err;
    return "";
  }
  return Url(name);
}

PostgresCluster& SharedPostgresCluster() {
  static PostgresCluster cluster;  // destroyed at exit: the server stops, the files go
  return cluster;
}

}  // namespace aevatar::testing
