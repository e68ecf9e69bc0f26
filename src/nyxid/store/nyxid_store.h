#ifndef AEVATAR_NYXID_STORE_NYXID_STORE_H_
#define AEVATAR_NYXID_STORE_NYXID_STORE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nyxid/model.h"
#include "nyxid/store/facts_reads.h"

namespace aevatar::nyxid {

// The broker's durable state. Every method is one atomic step; every write is
// committed before it returns. Lookups that find nothing return NotFound;
// inserts that collide with a unique name return AlreadyExists. Messages never
// contain secrets (password hashes and key hashes are bound, not quoted).
// Implementations are thread-safe.
class NyxidStore : public FactsReads {
 public:
  virtual ~NyxidStore() = default;

  // Accounts.
  virtual absl::Status InsertUser(const User& user) = 0;
  // Updates password hash and platform-admin flag of an existing user.
  virtual absl::Status UpdateUser(const User& user) = 0;
  virtual absl::StatusOr<User> FindUserByName(const std::string& username) = 0;
  absl::StatusOr<User> FindUserById(const std::string& id) override = 0;
  virtual absl::StatusOr<std::vector<User>> ListUsers() = 0;

  // Organisations and memberships.
  virtual absl::Status InsertOrg(const Org& org) = 0;
  virtual absl::StatusOr<Org> FindOrgBySlug(const std::string& slug) = 0;
  virtual absl::StatusOr<Org> FindOrgById(const std::string& id) = 0;
  // Inserts or changes the role of a membership.
  virtual absl::Status PutMembership(const Membership& membership) = 0;
  absl::StatusOr<std::vector<Membership>> MembershipsOfUser(const std::string& user_id) override =
      0;

  // Catalog (operator-owned; inserted or replaced by id). A kLlm service's
  // provider_api_key is sealed at rest (XChaCha20-Poly1305 under the store's
  // at-rest key) and opened on read; DataLoss when it cannot be opened.
  virtual absl::Status PutCatalogService(const CatalogService& service) = 0;
  absl::StatusOr<CatalogService> FindCatalogService(const std::string& id) override = 0;
  virtual absl::StatusOr<std::vector<CatalogService>> ListCatalog() = 0;

  // UserServices. Insert is AlreadyExists when the owner already has a route
  // with the same slug or the same label.
  virtual absl::Status InsertUserService(const UserService& service) = 0;
  absl::StatusOr<UserService> FindUserService(const std::string& id) override = 0;
  // Replaces the mutable fields (policy, active, allowed, label, node, updated_at).
  virtual absl::Status UpdateUserService(const UserService& service) = 0;
  // Routes owned by any of `owners`, ordered by creation.
  virtual absl::StatusOr<std::vector<UserService>> ListUserServices(
      const std::vector<Owner>& owners) = 0;
  virtual absl::StatusOr<std::vector<UserService>> ListAutoConnected(
      const std::string& catalog_service_id) = 0;
  virtual absl::StatusOr<UserService> FindUserServiceBySlug(const Owner& owner,
                                                            const std::string& slug) = 0;

  // Agent Keys (hashes only).
  virtual absl::Status InsertAgentKey(const AgentKeyRecord& key) = 0;
  absl::StatusOr<AgentKeyRecord> FindAgentKeyByHash(const std::string& key_hash_hex) override = 0;
  virtual absl::StatusOr<std::vector<AgentKeyRecord>> ListAgentKeys(const std::string& user_id) = 0;
  // Marks a key of `user_id` revoked (idempotent); NotFound for another
  // user's or an unknown key.
  virtual absl::Status RevokeAgentKey(const std::string& user_id, const std::string& key_id,
                                      int64_t now_ms) = 0;

  // Registered introspection clients.
  virtual absl::Status PutClient(const RegisteredClient& client) = 0;
  virtual absl::StatusOr<RegisteredClient> FindClientBySecretHash(
      const std::string& secret_sha256_hex) = 0;

  // The admin audit log: append-only (the table refuses updates and deletes).
  virtual absl::Status AppendAdminAudit(const AdminAuditEntry& entry) = 0;
  // Entries with seq > `after_seq`, oldest first, at most `limit`.
  virtual absl::StatusOr<std::vector<AdminAuditEntry>> ListAdminAudit(int64_t after_seq,
                                                                      int limit) = 0;

  // The facts generation: a number that moves, in the same transaction, with
  // every change of a user, organisation, membership, catalog service, user
  // service or Agent Key (whoever writes it: another process, another
  // replica), and never moves back; it moves to at least the wall clock in
  // microseconds, so even a database restored from a backup does not reach
  // again a number it had before. A value remembered from a read made after
  // reading the generation stays right while the generation stays put.
  virtual absl::StatusOr<int64_t> FactsGeneration() = 0;

  // Cheap liveness probe for /readyz.
  virtual absl::Status Ping() = 0;
};

// Opens (creating and migrating) the SQLite store at `path`. (The
// PostgreSQL store that replicas share: nyxid/store/postgres_nyxid.h.) `at_rest_key`
// (32 bytes; NyxidService keeps it in <state-dir>/at-rest.key) seals the
// secrets the store holds; InvalidArgument for another size.
absl::StatusOr<std::unique_ptr<NyxidStore>> OpenSqliteNyxidStore(const std::string& path,
                                                                 std::string at_rest_key);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_STORE_NYXID_STORE_H_
