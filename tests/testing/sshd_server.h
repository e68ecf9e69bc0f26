#ifndef AEVATAR_TESTS_TESTING_SSHD_SERVER_H_
#define AEVATAR_TESTS_TESTING_SSHD_SERVER_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace aevatar::testing {

// A real OpenSSH server (Debian's openssh-server) on a loopback port, for
// tests of what an SSH target runs. Its files live in `dir`: a fresh
// ed25519 host key, the authorized_keys made of `authorized_keys_lines`,
// its config and pid file. Only public-key logins of the current user (root
// in CI, allowed for forced commands only) with those keys are accepted; a
// key's `environment="…"` options apply (PermitUserEnvironment). Stopped by
// the destructor.
class SshdServer {
 public:
  SshdServer(const std::string& dir, const std::vector<std::string>& authorized_keys_lines);
  ~SshdServer();
  SshdServer(const SshdServer&) = delete;
  SshdServer& operator=(const SshdServer&) = delete;

  // Whether sshd is listening; `error()` says why not.
  bool ok() const { return port_ > 0; }
  const std::string& error() const { return error_; }
  uint16_t port() const { return port_; }
  // A known_hosts file pinning this server's host key for 127.0.0.1:port.
  const std::string& known_hosts_path() const { return known_hosts_path_; }
  // Restarts sshd on the same port with a new host key (a host reinstalled,
  // or a machine in the middle); known_hosts_path() keeps the old pin.
  bool ChangeHostKey();

 private:
  std::string dir_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string known_hosts_path_;
  std::string error_;
};

// Makes an ed25519 key pair at `path` (and `path`.pub) with ssh-keygen;
// returns the public key line, or "" on failure.
std::string MakeSshKey(const std::string& path);

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_SSHD_SERVER_H_
