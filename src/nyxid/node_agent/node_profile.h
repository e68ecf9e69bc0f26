#ifndef AEVATAR_NYXID_NODE_AGENT_NODE_PROFILE_H_
#define AEVATAR_NYXID_NODE_AGENT_NODE_PROFILE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

// A node profile: one registration of this machine as a NyxID node, kept
// apart from every other profile (docs/private-ssh.md).
//
//   <config>/nodes/<profile>/config.toml    [server] url, [node] id and name,
//                                           [credentials] backend,
//                                           [ssh] allowed_targets ("host:port")
//   <config>/nodes/<profile>/credentials.enc  sealed: the node secret and the
//                                           SSH keys (XChaCha20-Poly1305)
//   <config>/nodes/<profile>/known_hosts    the pinned host keys
//   <data>/nyxid/credential-keys/<profile>.key  the sealing key, outside the
//                                           profile: a copied profile reveals
//                                           no secret
// <config> is $XDG_CONFIG_HOME/nyxid (~/.config/nyxid), <data>
// $XDG_DATA_HOME (~/.local/share). Directories 0700, secret files 0600.
namespace aevatar::nyxid::node {

// A key the node holds for one SSH service and principal.
struct SshCredential {
  std::string service;  // the SSH service's slug (or id) as given to `add`
  std::string principal;
  std::string host;
  int port = 22;
  std::string private_key;  // OpenSSH private key text
};

struct NodeSecrets {
  std::string node_secret;
  std::vector<SshCredential> ssh;

  // The credential for an exec request naming this service (its slug or id)
  // and principal, if any.
  const SshCredential* Find(const std::string& service_id, const std::string& service_slug,
                            const std::string& principal) const;
};

struct NodeProfile {
  std::string name;
  std::string dir;
  std::string server_url;  // ws:// or wss://…/api/v1/nodes/ws
  // wss:// only: a PEM CA that verifies NyxID besides the system store.
  std::string server_ca_file;
  std::string node_id;
  std::string node_name;
  std::vector<std::string> allowed_targets;  // "host:port"; empty allows none

  std::string KnownHostsPath() const { return dir + "/known_hosts"; }
  std::string StatePath() const { return dir + "/daemon.state"; }
  std::string PidPath() const { return dir + "/daemon.pid"; }
  std::string LogPath() const { return dir + "/daemon.log"; }
  bool AllowsTarget(const std::string& host, int port) const;
};

// True for 1..32 characters of [a-z0-9_-].
bool IsProfileName(const std::string& name);

std::string NodeProfileDir(const std::string& profile);

// Creates a profile (AlreadyExists when it exists) with `secrets` sealed.
absl::Status CreateNodeProfile(const NodeProfile& profile, const NodeSecrets& secrets);

// Reads config.toml: InvalidArgument naming the line of a syntax error or
// the key that is missing or of the wrong type; NotFound when the profile
// does not exist.
absl::StatusOr<NodeProfile> LoadNodeProfile(const std::string& profile);

absl::StatusOr<NodeSecrets> LoadNodeSecrets(const NodeProfile& profile);
absl::Status SaveNodeSecrets(const NodeProfile& profile, const NodeSecrets& secrets);

}  // namespace aevatar::nyxid::node

#endif  // AEVATAR_NYXID_NODE_AGENT_NODE_PROFILE_H_
