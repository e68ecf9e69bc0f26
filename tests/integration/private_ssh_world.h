#ifndef AEVATAR_TESTS_INTEGRATION_PRIVATE_SSH_WORLD_H_
#define AEVATAR_TESTS_INTEGRATION_PRIVATE_SSH_WORLD_H_

#include <memory>
#include <string>

#include "doubles/responses_double.h"
#include "service_process.h"
#include "testing/shell_run.h"
#include "testing/sshd_server.h"

namespace aevatar::testing {

// A user's side of private_ssh, set up as codex-exec-node-setup.md says,
// every piece real except the model (the responses double: no provider is
// reachable from CI): an SSH target (a real sshd on loopback whose dedicated
// key forces host/aevatar-codex-wrapper into a Git workspace, the host's own
// Codex CLI logged in with its own key) and this machine registered as the
// user's NyxID node "laptop" (profile "work", its daemon running, the target
// in [ssh].allowed_targets) with the private SSH service "box" for the
// current Unix user, whose key the node holds.
class PrivateSshWorld {
 public:
  static constexpr char kHostApiKey[] = "sk-host-own-key-PLANTED-77a1";

  PrivateSshWorld();
  ~PrivateSshWorld();  // stops the daemon

  // The SSH target and its Codex. False with error() on failure.
  bool BuildHost();
  // Everything on NyxID's side for `who` (password `password`) at
  // `nyxid_url`: login, node, daemon, service, key and pin.
  bool RegisterNode(const std::string& nyxid_url, const std::string& who,
                    const std::string& password);
  // Logs `who` in with the CLI.
  bool Login(const std::string& who, const std::string& password);

  // The `nyxid` CLI as `who` (its own config and data directories).
  ShellRun Cli(const std::string& who, const std::string& args, const std::string& input = "");
  // `nyxid ssh exec … --timeout-secs 60 EXTRA` with `prompt` on stdin.
  ShellRun Exec(const std::string& who, const std::string& service, const std::string& principal,
                const std::string& prompt, const std::string& extra = "");
  // `nyxid node ssh-credentials add` for "box" again, as `who`.
  ShellRun AddCredential(const std::string& who);

  const std::string& dir() const { return dir_.path(); }
  const std::string& user() const { return user_; }
  const std::string& error() const { return error_; }
  const std::string& node_id() const { return node_id_; }
  const std::string& registration_token() const { return registration_token_; }
  doubles::ResponsesDouble& model() { return *model_; }
  SshdServer& sshd() { return *sshd_; }
  std::string DaemonLog(const std::string& who) const;
  std::string WrapperLog() const;

 private:
  bool Fail(const std::string& why);

  TempDir dir_{"/var/tmp"};
  std::string user_;
  std::string nyxid_url_;
  std::string owner_;  // who registered the node
  std::unique_ptr<doubles::ResponsesDouble> model_;
  std::unique_ptr<SshdServer> sshd_;
  std::string registration_token_;
  std::string node_id_;
  std::string error_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_INTEGRATION_PRIVATE_SSH_WORLD_H_
