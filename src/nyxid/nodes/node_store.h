#ifndef AEVATAR_NYXID_NODES_NODE_STORE_H_
#define AEVATAR_NYXID_NODES_NODE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

// NyxID's records of nodes (a user's own machine that connects out to NyxID
// and relays SSH for that user's SSH services) and of the SSH services'
// targets. Credentials are stored as SHA-256 hashes only.
namespace aevatar::nyxid {

// A one-time registration token, as stored.
struct NodeRegistrationToken {
  std::string token_hash_hex;
  std::string user_id;
  std::string node_name;
  int64_t expires_at_ms = 0;
};

struct NodeRecord {
  std::string id;  // "node_…"
  std::string user_id;
  std::string name;
  std::string secret_hash_hex;  // SHA-256 of the node's "nyxid_node_…" secret
  int64_t created_at_ms = 0;
  int64_t last_seen_ms = 0;  // the last connect or disconnect
};

// Where an SSH UserService points (the UserService row itself, with its
// node_id, lives in the NyxidStore).
struct SshTarget {
  std::string user_service_id;
  std::string host;
  int port = 22;
  std::vector<std::string> principals;  // the Unix users a call may name
};

// Thread-safe; every write is committed before it returns.
class NodeStore {
 public:
  virtual ~NodeStore() = default;
  virtual absl::Status InsertToken(const NodeRegistrationToken& token) = 0;
  // Marks the token used and returns it, once: NotFound for an unknown,
  // expired or already used token (the same answer for each).
  virtual absl::StatusOr<NodeRegistrationToken> ConsumeToken(const std::string& token_hash_hex,
                                                             int64_t now_ms) = 0;
  // AlreadyExists when the user has a node of that name.
  virtual absl::Status InsertNode(const NodeRecord& node) = 0;
  virtual absl::StatusOr<NodeRecord> FindNode(const std::string& id) = 0;
  virtual absl::StatusOr<NodeRecord> FindNodeBySecretHash(const std::string& secret_hash_hex) = 0;
  virtual absl::StatusOr<std::vector<NodeRecord>> ListNodes(const std::string& user_id) = 0;
  virtual absl::Status TouchNode(const std::string& id, int64_t now_ms) = 0;
  // Deletes the node (its secret stops working); NotFound for another
  // user's or an unknown node.
  virtual absl::Status DeleteNode(const std::string& user_id, const std::string& id) = 0;

  virtual absl::Status PutSshTarget(const SshTarget& target) = 0;
  virtual absl::StatusOr<SshTarget> FindSshTarget(const std::string& user_service_id) = 0;
};

// Opens (creating and migrating) the SQLite node store at `path`.
absl::StatusOr<std::unique_ptr<NodeStore>> OpenSqliteNodeStore(const std::string& path);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_NODES_NODE_STORE_H_
