#include "private_ssh_world.h"

#include <pwd.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "testing/host_codex.h"
#include "testing/proc_file.h"

namespace aevatar::testing {

using nlohmann::json;

PrivateSshWorld::PrivateSshWorld() {
  const passwd* entry = ::getpwuid(::getuid());
  user_ = entry != nullptr ? entry->pw_name : "";
}

PrivateSshWorld::~PrivateSshWorld() {
  if (!owner_.empty()) Cli(owner_, "node daemon stop --profile work");
}

bool PrivateSshWorld::Fail(const std::string& why) {
  error_ = why;
  return false;
}

ShellRun PrivateSshWorld::Cli(const std::string& who, const std::string& args,
                              const std::string& input) {
  std::string stdin_path;
  if (!input.empty()) {
    stdin_path = dir() + "/stdin.txt";
    std::ofstream(stdin_path, std::ios::trunc) << input;
  }
  return RunShell(dir(),
                  absl::StrCat("XDG_CONFIG_HOME='", dir(), "/", who, "/cfg' XDG_DATA_HOME='", dir(),
                               "/", who, "/data' NYXID_URL='", nyxid_url_, "' timeout 120 ",
                               BinaryPath("nyxid"), " ", args),
                  stdin_path);
}

ShellRun PrivateSshWorld::Exec(const std::string& who, const std::string& service,
                               const std::string& principal, const std::string& prompt,
                               const std::string& extra) {
  return Cli(who,
             absl::StrCat("ssh exec --service ", service, " --principal ", principal,
                          " --timeout-secs 60 ", extra),
             prompt);
}

ShellRun PrivateSshWorld::AddCredential(const std::string& who) {
  // As the spec shows it: the profile named by the environment.
  return RunShell(
      dir(),
      absl::StrCat("NYXID_PROFILE=work XDG_CONFIG_HOME='", dir(), "/", who, "/cfg' XDG_DATA_HOME='",
                   dir(), "/", who, "/data' ", BinaryPath("nyxid"),
                   " node ssh-credentials add --service box --principal ", user_, " --key-file '",
                   dir(), "/node_key' --host 127.0.0.1 --port ", sshd_->port()));
}

std::string PrivateSshWorld::DaemonLog(const std::string& who) const {
  return ReadProcFile(dir() + "/" + who + "/cfg/nyxid/nodes/work/daemon.log");
}

std::string PrivateSshWorld::WrapperLog() const { return ReadProcFile(dir() + "/wrapper.log"); }

bool PrivateSshWorld::BuildHost() {
  doubles::ResponsesDoubleOptions options;
  options.api_key = kHostApiKey;
  options.record_path = dir() + "/model.jsonl";
  auto started = doubles::ResponsesDouble::Start(options);
  if (!started.ok()) return Fail("model double: " + started.status().ToString());
  model_ = std::move(*started);
  if (RunShell(dir(), "git init -q '" + dir() + "/ws'").exit_code != 0) return Fail("git init");
  if (!MakeHostCodexHome(dir(), "codex-home", model_->port(), kHostApiKey, true)) {
    return Fail("codex login");
  }
  const std::string pub = MakeSshKey(dir() + "/node_key");
  if (pub.empty()) return Fail("ssh-keygen");
  sshd_ = std::make_unique<SshdServer>(
      dir(), std::vector<std::string>{WrapperKeyLine(
                 dir(), "codex-home",
                 absl::StrCat("--workspace ", dir(), "/ws --codex ", kHostCodex), pub)});
  if (!sshd_->ok()) return Fail(sshd_->error());
  return true;
}

bool PrivateSshWorld::Login(const std::string& who, const std::string& password) {
  return Cli(who, absl::StrCat("login --username ", who, " --password-stdin"), password + "\n")
             .exit_code == 0;
}

bool PrivateSshWorld::RegisterNode(const std::string& nyxid_url, const std::string& who,
                                   const std::string& password) {
  nyxid_url_ = nyxid_url;
  if (!Login(who, password)) return Fail("login " + who);
  // 1. A one-time token, and this machine registered as node "laptop".
  const ShellRun token = Cli(who, "node register-token --name laptop --terminal --output json");
  registration_token_ = json::parse(token.out, nullptr, false).value("token", "");
  if (registration_token_.empty()) return Fail("register-token: " + token.err);
  const std::string ws_url = "ws://" + nyxid_url.substr(7) + "/api/v1/nodes/ws";
  const ShellRun reg = Cli(who, "node register --token " + registration_token_ + " --url " +
                                    ws_url + " --profile work --encrypted-file");
  if (reg.exit_code != 0) return Fail("register: " + reg.err);
  owner_ = who;
  // 2. Only this target, in the profile's [ssh].allowed_targets.
  const std::string config = dir() + "/" + who + "/cfg/nyxid/nodes/work/config.toml";
  const std::string text =
      std::regex_replace(ReadProcFile(config), std::regex("allowed_targets = \\[\\]"),
                         "allowed_targets = [\"127.0.0.1:" + std::to_string(sshd_->port()) + "\"]");
  std::ofstream(config, std::ios::trunc) << text;
  const ShellRun start = Cli(who, "node daemon start --profile work");
  if (start.exit_code != 0) return Fail("daemon start: " + start.out + start.err);
  const json nodes = json::parse(Cli(who, "node list --output json").out, nullptr, false);
  if (!nodes.is_object() || nodes["nodes"].size() != 1) return Fail("node list");
  node_id_ = nodes["nodes"][0].value("id", "");
  // 3. The private service, bound to the node; the node holds the key.
  const ShellRun service =
      Cli(who, absl::StrCat("service add-ssh --label box --host 127.0.0.1 --port ", sshd_->port(),
                            " --via-node ", node_id_, " --node-key --principals ", user_,
                            " --output json"));
  if (service.exit_code != 0) return Fail("add-ssh: " + service.err);
  const ShellRun creds = AddCredential(who);
  if (creds.exit_code != 0) return Fail("ssh-credentials add: " + creds.err);
  return true;
}

}  // namespace aevatar::testing
