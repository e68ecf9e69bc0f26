#include "nyxid/node_agent/node_profile.h"

#include <cstdlib>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "cpptoml.h"
#include "nlohmann/json.hpp"
#include "os/atomic_file.h"

namespace aevatar::nyxid::node {
namespace {

constexpr size_t kMaxConfigBytes = 64 << 10;
constexpr size_t kMaxSecretsBytes = 4 << 20;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string ConfigBase() {
  std::string base = Env("XDG_CONFIG_HOME");
  if (base.empty()) base = Env("HOME") + "/.config";
  return base + "/nyxid";
}

std::string SealingKeyPath(const std::string& profile) {
  std::string base = Env("XDG_DATA_HOME");
  if (base.empty()) base = Env("HOME") + "/.local/share";
  return base + "/nyxid/credential-keys/" + profile + ".key";
}

absl::StatusOr<std::string> SealingKey(const std::string& profile) {
  const std::string path = SealingKeyPath(profile);
  if (absl::Status st = os::MakeDirectories(path.substr(0, path.rfind('/')), 0700); !st.ok()) {
    return st;
  }
  return os::LoadOrCreateKeyFile(path, 32);
}

// A TOML basic string: the values written here are validated ids, names and
// URLs, but quotes and backslashes are escaped all the same.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string ConfigText(const NodeProfile& profile) {
  std::ostringstream out;
  out << "# nyxid node profile \"" << profile.name << "\" (docs/private-ssh.md)\n"
      << "[server]\nurl = " << Quoted(profile.server_url) << "\n"
      << (profile.server_ca_file.empty() ? ""
                                         : "ca_file = " + Quoted(profile.server_ca_file) + "\n")
      << "\n"
      << "[node]\nid = " << Quoted(profile.node_id) << "\nname = " << Quoted(profile.node_name)
      << "\n\n"
      << "[credentials]\n# the node secret and SSH keys, sealed in credentials.enc\n"
      << "backend = \"encrypted-file\"\n\n"
      << "[ssh]\n# the only host:port pairs this node connects to; empty allows none\n"
      << "allowed_targets = [";
  for (size_t i = 0; i < profile.allowed_targets.size(); ++i) {
    out << (i ? ", " : "") << Quoted(profile.allowed_targets[i]);
  }
  out << "]\n";
  return out.str();
}

absl::StatusOr<std::string> RequiredText(const cpptoml::table& config, const std::string& key) {
  auto value = config.get_qualified_as<std::string>(key);
  if (!value || value->empty()) {
    return absl::InvalidArgumentError(absl::StrCat("config.toml: ", key, " (text) is required"));
  }
  return *value;
}

}  // namespace

const SshCredential* NodeSecrets::Find(const std::string& service_id,
                                       const std::string& service_slug,
                                       const std::string& principal) const {
  for (const SshCredential& credential : ssh) {
    if ((credential.service == service_id || credential.service == service_slug) &&
        credential.principal == principal) {
      return &credential;
    }
  }
  return nullptr;
}

bool NodeProfile::AllowsTarget(const std::string& host, int port) const {
  const std::string target = absl::StrCat(host, ":", port);
  for (const std::string& allowed : allowed_targets) {
    if (allowed == target) return true;
  }
  return false;
}

bool IsProfileName(const std::string& name) {
  return !name.empty() && name.size() <= 32 &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos;
}

std::string NodeProfileDir(const std::string& profile) {
  return ConfigBase() + "/nodes/" + profile;
}

absl::Status CreateNodeProfile(const NodeProfile& profile, const NodeSecrets& secrets) {
  if (absl::Status st = os::MakeDirectories(profile.dir, 0700); !st.ok()) return st;
  if (absl::Status st = os::WriteFileAtomically(profile.dir + "/config.toml", ConfigText(profile),
                                                0600, os::IfExists::kFail);
      !st.ok()) {
    return st;
  }
  return SaveNodeSecrets(profile, secrets);
}

absl::StatusOr<NodeProfile> LoadNodeProfile(const std::string& name) {
  if (!IsProfileName(name)) {
    return absl::InvalidArgumentError("a profile name is 1 to 32 characters of [a-z0-9_-]");
  }
  NodeProfile profile;
  profile.name = name;
  profile.dir = NodeProfileDir(name);
  auto text = os::ReadSmallFile(profile.dir + "/config.toml", kMaxConfigBytes);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(absl::StrCat(
        "no node profile \"", name, "\" (register one: nyxid node register --profile ", name, ")"));
  }
  if (!text.ok()) return text.status();
  std::shared_ptr<cpptoml::table> config;
  try {
    std::istringstream in(*text);
    cpptoml::parser parser(in);
    config = parser.parse();
  } catch (const cpptoml::parse_exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("config.toml: ", e.what()));
  }
  auto url = RequiredText(*config, "server.url");
  auto id = RequiredText(*config, "node.id");
  if (!url.ok()) return url.status();
  if (!id.ok()) return id.status();
  profile.server_url = *url;
  profile.node_id = *id;
  profile.node_name = config->get_qualified_as<std::string>("node.name").value_or("");
  profile.server_ca_file = config->get_qualified_as<std::string>("server.ca_file").value_or("");
  if (config->contains_qualified("ssh.allowed_targets")) {
    auto targets = config->get_qualified_array_of<std::string>("ssh.allowed_targets");
    if (!targets) {
      return absl::InvalidArgumentError(
          "config.toml: ssh.allowed_targets must be an array of \"host:port\" strings");
    }
    profile.allowed_targets = *targets;
  }
  return profile;
}

absl::StatusOr<NodeSecrets> LoadNodeSecrets(const NodeProfile& profile) {
  auto key = SealingKey(profile.name);
  if (!key.ok()) return key.status();
  auto sealed = os::ReadPrivateFile(profile.dir + "/credentials.enc", kMaxSecretsBytes);
  if (!sealed.ok()) return sealed.status();
  auto plain = base::SecretBoxOpen(*key, *sealed);
  if (!plain.ok()) {
    return absl::DataLossError("credentials.enc cannot be opened with this profile's key (" +
                               SealingKeyPath(profile.name) + ")");
  }
  auto doc = base::ParseJsonObject(*plain);
  if (!doc.ok()) return absl::DataLossError("credentials.enc holds no credential document");
  NodeSecrets secrets;
  secrets.node_secret = base::StringOr(*doc, "node_secret", "");
  for (const nlohmann::json& entry : base::ArrayOrEmpty(*doc, "ssh")) {
    if (!entry.is_object()) continue;
    secrets.ssh.push_back(
        {base::StringOr(entry, "service", ""), base::StringOr(entry, "principal", ""),
         base::StringOr(entry, "host", ""), static_cast<int>(base::IntOr(entry, "port", 22)),
         base::StringOr(entry, "private_key", "")});
  }
  return secrets;
}

absl::Status SaveNodeSecrets(const NodeProfile& profile, const NodeSecrets& secrets) {
  auto key = SealingKey(profile.name);
  if (!key.ok()) return key.status();
  nlohmann::json ssh = nlohmann::json::array();
  for (const SshCredential& c : secrets.ssh) {
    ssh.push_back({{"service", c.service},
                   {"principal", c.principal},
                   {"host", c.host},
                   {"port", c.port},
                   {"private_key", c.private_key}});
  }
  const nlohmann::json doc = {{"node_secret", secrets.node_secret}, {"ssh", ssh}};
  return os::WriteFileAtomically(profile.dir + "/credentials.enc",
                                 base::SecretBoxSeal(*key, doc.dump()), 0600);
}

}  // namespace aevatar::nyxid::node
