#include "testing/sshd_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "testing/loopback_port.h"
#include "testing/proc_file.h"

namespace aevatar::testing {
namespace {

constexpr char kSshd[] = "/usr/sbin/sshd";

bool Accepts(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return connected;
}

std::string Config(const std::string& dir, uint16_t port) {
  std::ostringstream config;
  config << "Port " << port << "\n"
         << "ListenAddress 127.0.0.1\n"
         << "HostKey " << dir << "/host_key\n"
         << "PidFile " << dir << "/sshd.pid\n"
         << "AuthorizedKeysFile " << dir << "/authorized_keys\n"
         << "StrictModes no\n"
         << "UsePAM no\n"
         << "PasswordAuthentication no\n"
         << "KbdInteractiveAuthentication no\n"
         << "PubkeyAuthentication yes\n"
         << "PermitRootLogin forced-commands-only\n"
         << "PermitUserEnvironment yes\n"
         << "LogLevel ERROR\n";
  return config.str();
}

pid_t StartSshd(const std::string& dir) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int log = ::open((dir + "/sshd.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (log >= 0) ::dup2(log, 2);
  const std::string config = dir + "/sshd_config";
  ::execl(kSshd, kSshd, "-D", "-e", "-f", config.c_str(), static_cast<char*>(nullptr));
  ::_exit(127);
}

}  // namespace

std::string MakeSshKey(const std::string& path) {
  const std::string command = "ssh-keygen -q -t ed25519 -N '' -C aevatar-test -f '" + path + "'";
  if (std::system(command.c_str()) != 0) return "";
  std::string line = ReadProcFile(path + ".pub");
  while (!line.empty() && line.back() == '\n') line.pop_back();
  return line;
}

SshdServer::SshdServer(const std::string& dir,
                       const std::vector<std::string>& authorized_keys_lines) {
  if (::access(kSshd, X_OK) != 0) {
    error_ = "openssh-server is not installed (scripts/setup installs it)";
    return;
  }
  dir_ = dir;
  const std::string host_key = MakeSshKey(dir + "/host_key");
  if (host_key.empty()) {
    error_ = "ssh-keygen failed";
    return;
  }
  {
    std::ofstream keys(dir + "/authorized_keys");
    for (const std::string& line : authorized_keys_lines) keys << line << "\n";
  }
  // sshd's privilege-separation directory (Debian's package makes it at boot).
  ::mkdir("/run/sshd", 0755);
  for (int attempt = 0; attempt < 3 && port_ == 0; ++attempt) {
    const uint16_t port = FreeLoopbackPort();
    std::ofstream(dir + "/sshd_config") << Config(dir, port);
    pid_ = StartSshd(dir);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {  // it exited: the port was taken
        pid_ = -1;
        break;
      }
      if (Accepts(port)) {
        port_ = port;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (port_ == 0 && pid_ > 0) {  // neither listening nor gone: stop it before retrying
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  if (port_ == 0) {
    error_ = "sshd did not start: " + ReadProcFile(dir + "/sshd.log");
    return;
  }
  known_hosts_path_ = dir + "/known_hosts";
  std::ofstream(known_hosts_path_) << "[127.0.0.1]:" << port_ << " " << host_key << "\n";
}

bool SshdServer::ChangeHostKey() {
  if (port_ == 0) return false;
  ::kill(pid_, SIGTERM);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
  ::unlink((dir_ + "/host_key").c_str());
  ::unlink((dir_ + "/host_key.pub").c_str());
  if (MakeSshKey(dir_ + "/host_key").empty()) return false;
  pid_ = StartSshd(dir_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Accepts(port_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

SshdServer::~SshdServer() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  ::waitpid(pid_, nullptr, 0);
}

}  // namespace aevatar::testing
