// `nyxid node register-token|register|list|delete` and
// `nyxid node ssh-credentials add|rotate-host-key|list`: this machine as a
// NyxID node, and the SSH keys it holds (docs/private-ssh.md).
#include <cstdlib>
#include <iomanip>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "base/api_error.h"
#include "base/json_read.h"
#include "cli/nyxid_commands.h"
#include "cli/read_file.h"
#include "http/service_tls.h"
#include "http/url.h"
#include "nyxid/node_agent/node_profile.h"
#include "nyxid/node_agent/ssh_relay.h"

namespace aevatar::cli {
namespace {

namespace node = nyxid::node;

constexpr size_t kMaxKeyFileBytes = 64 << 10;

struct RegisterOptions {
  std::string name;
  std::string token;
  std::string url;
  std::string ca_file;
  bool terminal = false;
  bool keychain = false;
  bool encrypted_file = false;
};

struct CredentialOptions {
  std::string service;
  std::string principal;
  std::string key_file;
  std::string host;
  int port = 22;
};

// A failure on this side: "nyxid: MESSAGE" on stderr (and, with `as_json`,
// a problem object on stdout; ReportNyxidError).
int NodeFail(const std::string& message, bool as_json) {
  return ReportNyxidError(absl::FailedPreconditionError(message), as_json);
}

// A typed failure says its code first, as NyxID's own errors do.
int NodeFail(const absl::Status& status, bool as_json) {
  return ReportNyxidError(
      absl::Status(status.code(), base::ApiCode(status) + ": " + std::string(status.message())),
      as_json);
}

void PrintJson(const nlohmann::json& document) {
  std::cout << document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

int RunRegisterToken(const NyxidGlobalOptions& global, const RegisterOptions& options) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  auto token = NyxidCall(*session, "POST", "/api/v1/nodes/register-token",
                         nlohmann::json{{"name", options.name}});
  if (!token.ok()) return ReportNyxidError(token.status(), global.json());
  if (global.output == "json") {
    std::cout << token->dump() << "\n";
  } else {
    std::cout << "token: " << base::StringOr(*token, "token", "") << "\n"
              << "It registers one node once, within ten minutes: nyxid node register --token T "
                 "--url wss://…/api/v1/nodes/ws --profile NAME\n";
  }
  return 0;
}

// ws[s]://host:port/api/v1/nodes/ws -> http[s]://host:port (where /register is).
std::string HttpBaseOf(const std::string& ws_url) {
  const bool tls = absl::StartsWith(ws_url, "wss://");
  const std::string scheme = tls ? "https://" : "http://";
  std::string base = scheme + ws_url.substr(tls ? 6 : 5);
  const size_t path = base.find('/', scheme.size());
  return path == std::string::npos ? base : base.substr(0, path);
}

int RunRegister(const std::string& profile_name, const RegisterOptions& options, bool as_json) {
  if (options.keychain) {
    return NodeFail(base::ApiError(absl::StatusCode::kFailedPrecondition, "KEYCHAIN_UNAVAILABLE",
                                   "this build has no keychain backend; use --encrypted-file (the "
                                   "credentials are sealed under a key kept outside the profile)"),
                    as_json);
  }
  if (!node::IsProfileName(profile_name))
    return NodeFail("--profile must be 1 to 32 of [a-z0-9_-]", as_json);
  if (!absl::StartsWith(options.url, "ws://") && !absl::StartsWith(options.url, "wss://")) {
    return NodeFail(
        "--url must be NyxID's node endpoint, wss://HOST:PORT/api/v1/nodes/ws (ws:// without TLS)",
        as_json);
  }
  // The node secret and every relayed command travel on this connection.
  auto endpoint = http::ParseHttpUrl(HttpBaseOf(options.url));
  if (!endpoint.ok()) return NodeFail(std::string(endpoint.status().message()), as_json);
  if (!endpoint->tls && !http::IsLoopbackHost(endpoint->host)) {
    return NodeFail("--url: ws:// is only for a NyxID on this host; use wss:// (TLS)", as_json);
  }
  if (node::LoadNodeProfile(profile_name).ok()) {
    return NodeFail("profile \"" + profile_name + "\" exists; choose another --profile", as_json);
  }
  NyxidSession anonymous{HttpBaseOf(options.url), ""};
  anonymous.tls.ca_file = options.ca_file;
  auto registered = NyxidCall(anonymous, "POST", "/api/v1/nodes/register",
                              nlohmann::json{{"token", options.token}});
  if (!registered.ok()) return ReportNyxidError(registered.status(), as_json);
  node::NodeProfile profile;
  profile.name = profile_name;
  profile.dir = node::NodeProfileDir(profile_name);
  profile.server_url = options.url;
  profile.server_ca_file = options.ca_file;
  profile.node_id = base::StringOr(*registered, "node_id", "");
  profile.node_name = base::StringOr(*registered, "name", "");
  node::NodeSecrets secrets;
  secrets.node_secret = base::StringOr(*registered, "node_secret", "");
  if (profile.node_id.empty() || secrets.node_secret.empty()) {
    return NodeFail("NyxID's answer lacks node_id or node_secret", as_json);
  }
  if (absl::Status st = node::CreateNodeProfile(profile, secrets); !st.ok()) {
    return NodeFail(std::string(st.message()), as_json);
  }
  if (as_json) {
    // Never the node secret: it stays sealed in the profile.
    PrintJson({{"node_id", profile.node_id},
               {"name", profile.node_name},
               {"profile", profile_name},
               {"dir", profile.dir}});
    return 0;
  }
  std::cout << "registered node " << profile.node_name << " (" << profile.node_id << ") as profile "
            << profile_name << " in " << profile.dir << "\n"
            << "next: nyxid node daemon start --profile " << profile_name << "\n";
  return 0;
}

int RunNodeList(const NyxidGlobalOptions& global) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  auto nodes = NyxidCall(*session, "GET", "/api/v1/nodes");
  if (!nodes.ok()) return ReportNyxidError(nodes.status(), global.json());
  if (global.output == "json") {
    std::cout << nlohmann::json{{"nodes", base::ArrayOrEmpty(*nodes, "nodes")}}.dump(2) << "\n";
    return 0;
  }
  std::cout << std::left << std::setw(30) << "ID" << std::setw(24) << "NAME"
            << "STATUS\n";
  for (const nlohmann::json& entry : base::ArrayOrEmpty(*nodes, "nodes")) {
    std::cout << std::setw(30) << base::StringOr(entry, "id", "") << std::setw(24)
              << base::StringOr(entry, "name", "") << base::StringOr(entry, "status", "") << "\n";
  }
  return 0;
}

int RunNodeDelete(const NyxidGlobalOptions& global, const std::string& id) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  auto deleted = NyxidCall(*session, "DELETE", "/api/v1/nodes/" + http::PercentEncode(id));
  if (!deleted.ok()) return ReportNyxidError(deleted.status(), global.json());
  if (global.json()) {
    PrintJson({{"id", id}, {"deleted", true}});
    return 0;
  }
  std::cout << "deleted node " << id << "\n";
  return 0;
}

int RunCredentialAdd(const std::string& profile_name, const CredentialOptions& options,
                     bool as_json) {
  auto profile = node::LoadNodeProfile(profile_name);
  if (!profile.ok()) return ReportNyxidError(profile.status(), as_json);
  auto secrets = node::LoadNodeSecrets(*profile);
  if (!secrets.ok()) return ReportNyxidError(secrets.status(), as_json);
  std::string key;
  if (!ReadWholeFile(options.key_file, key) || key.size() > kMaxKeyFileBytes) {
    return NodeFail("--key-file cannot be read (or is larger than 64 KiB)", as_json);
  }
  if (!absl::StrContains(key, "PRIVATE KEY-----")) {
    return NodeFail("--key-file must be an OpenSSH private key (the dedicated key for this target)",
                    as_json);
  }
  // The pin comes first: a key is only ever used against a pinned host.
  auto pinned = node::PinHostKey(*profile, options.host, options.port, /*rotate=*/false);
  if (!pinned.ok()) return NodeFail(pinned.status(), as_json);
  std::erase_if(secrets->ssh, [&](const node::SshCredential& c) {
    return c.service == options.service && c.principal == options.principal;
  });
  secrets->ssh.push_back(
      {options.service, options.principal, options.host, options.port, std::move(key)});
  if (absl::Status st = node::SaveNodeSecrets(*profile, *secrets); !st.ok()) {
    return NodeFail(std::string(st.message()), as_json);
  }
  const bool allowed = profile->AllowsTarget(options.host, options.port);
  if (as_json) {
    // Never the key: where it is held and the pinned host key only.
    PrintJson({{"service", options.service},
               {"principal", options.principal},
               {"host", options.host},
               {"port", options.port},
               {"host_key", *pinned},
               {"allowed_target", allowed}});
    return 0;
  }
  std::cout << "the node holds the key for " << options.principal << " on service "
            << options.service << "; host key pinned (" << *pinned << ")\n";
  if (!allowed) {
    std::cout << "note: " << options.host << ":" << options.port
              << " is not in [ssh].allowed_targets of " << profile->dir
              << "/config.toml; add it, then restart the daemon\n";
  }
  return 0;
}

int RunRotateHostKey(const std::string& profile_name, const CredentialOptions& options,
                     bool as_json) {
  auto profile = node::LoadNodeProfile(profile_name);
  if (!profile.ok()) return ReportNyxidError(profile.status(), as_json);
  auto pinned = node::PinHostKey(*profile, options.host, options.port, /*rotate=*/true);
  if (!pinned.ok()) return NodeFail(pinned.status(), as_json);
  if (as_json) {
    PrintJson({{"host", options.host}, {"port", options.port}, {"host_key", *pinned}});
    return 0;
  }
  std::cout << "host key of " << options.host << ":" << options.port << " pinned anew (" << *pinned
            << ")\n";
  return 0;
}

int RunCredentialList(const std::string& profile_name, bool as_json) {
  auto profile = node::LoadNodeProfile(profile_name);
  if (!profile.ok()) return ReportNyxidError(profile.status(), as_json);
  auto secrets = node::LoadNodeSecrets(*profile);
  if (!secrets.ok()) return ReportNyxidError(secrets.status(), as_json);
  if (as_json) {
    nlohmann::json held = nlohmann::json::array();
    for (const node::SshCredential& c : secrets->ssh) {
      held.push_back(
          {{"service", c.service}, {"principal", c.principal}, {"host", c.host}, {"port", c.port}});
    }
    PrintJson({{"credentials", held}});
    return 0;
  }
  for (const node::SshCredential& c : secrets->ssh) {
    std::cout << c.service << "\t" << c.principal << "\t" << c.host << ":" << c.port << "\n";
  }
  return 0;
}

}  // namespace

std::string NodeProfileName(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("NYXID_PROFILE");
  return env != nullptr && *env != '\0' ? env : "default";
}

void AddNyxidNodeCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code) {
  CLI::App* nodes = app.add_subcommand("node", "this machine as a NyxID node");
  nodes->require_subcommand(1);
  // The options outlive this function: the callbacks run after parsing.
  auto reg_ptr = std::make_shared<RegisterOptions>();
  auto cred_ptr = std::make_shared<CredentialOptions>();
  auto profile_ptr = std::make_shared<std::string>();
  auto id_ptr = std::make_shared<std::string>();
  RegisterOptions& reg = *reg_ptr;
  CredentialOptions& cred = *cred_ptr;
  std::string& profile = *profile_ptr;
  std::string& node_id = *id_ptr;

  CLI::App* token = nodes->add_subcommand("register-token", "mint a one-time registration token");
  token->add_option("--name", reg.name, "the node's name")->required();
  token->add_flag("--terminal", reg.terminal, "print it here (the default)");
  token->add_option("--output,-o", global.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  token->callback(
      [&global, &exit_code, reg_ptr] { exit_code = RunRegisterToken(global, *reg_ptr); });

  CLI::App* reg_cmd = nodes->add_subcommand("register", "register this machine with a token");
  reg_cmd->add_option("--token", reg.token, "the one-time token")->required();
  reg_cmd->add_option("--url", reg.url, "wss://HOST:PORT/api/v1/nodes/ws (ws:// without TLS)")
      ->required();
  reg_cmd
      ->add_option("--ca-file", reg.ca_file,
                   "PEM CA that verifies NyxID's certificate besides the system store "
                   "(kept in the profile for the daemon)")
      ->check(CLI::ExistingFile);
  reg_cmd->add_option("--profile", profile, "profile name (default $NYXID_PROFILE or default)");
  auto* keychain = reg_cmd->add_flag("--keychain", reg.keychain, "keep secrets in a keychain");
  reg_cmd->add_flag("--encrypted-file", reg.encrypted_file, "keep secrets sealed in a file")
      ->excludes(keychain);
  reg_cmd->callback([&global, &exit_code, reg_ptr, profile_ptr] {
    exit_code = RunRegister(NodeProfileName(*profile_ptr), *reg_ptr, global.json());
  });

  CLI::App* list = nodes->add_subcommand("list", "your nodes, online or not");
  list->add_option("--output,-o", global.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  list->callback([&global, &exit_code] { exit_code = RunNodeList(global); });

  CLI::App* del = nodes->add_subcommand("delete", "delete a node (its secret stops working)");
  del->add_option("id", node_id, "node id")->required();
  del->callback([&global, &exit_code, id_ptr] { exit_code = RunNodeDelete(global, *id_ptr); });

  CLI::App* creds = nodes->add_subcommand("ssh-credentials", "SSH keys this node holds");
  creds->require_subcommand(1);
  creds->add_option("--profile", profile, "profile name (default $NYXID_PROFILE or default)");
  CLI::App* add = creds->add_subcommand("add", "hold a key for a service and pin its host key");
  add->add_option("--service", cred.service, "SSH service slug or id")->required();
  add->add_option("--principal", cred.principal, "Unix user on the target")->required();
  add->add_option("--key-file", cred.key_file, "the dedicated private key")->required();
  add->add_option("--host", cred.host, "the target's host")->required();
  add->add_option("--port", cred.port, "the target's port")->check(CLI::Range(1, 65535));
  add->callback([&global, &exit_code, cred_ptr, profile_ptr] {
    exit_code = RunCredentialAdd(NodeProfileName(*profile_ptr), *cred_ptr, global.json());
  });
  CLI::App* rotate =
      creds->add_subcommand("rotate-host-key", "pin the target's current host key anew");
  rotate->add_option("--host", cred.host, "the target's host")->required();
  rotate->add_option("--port", cred.port, "the target's port")->check(CLI::Range(1, 65535));
  rotate->callback([&global, &exit_code, cred_ptr, profile_ptr] {
    exit_code = RunRotateHostKey(NodeProfileName(*profile_ptr), *cred_ptr, global.json());
  });
  CLI::App* held = creds->add_subcommand("list", "the keys held (never their contents)");
  held->callback([&global, &exit_code, profile_ptr] {
    exit_code = RunCredentialList(NodeProfileName(*profile_ptr), global.json());
  });

  AddNyxidNodeDaemonCommands(*nodes, global, exit_code);
}

}  // namespace aevatar::cli
