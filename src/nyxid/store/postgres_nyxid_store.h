#ifndef AEVATAR_NYXID_STORE_POSTGRES_NYXID_STORE_H_
#define AEVATAR_NYXID_STORE_POSTGRES_NYXID_STORE_H_

// Private to src/nyxid: the PostgreSQL implementation of NyxidStore
// (postgres_nyxid.h). Its methods are split over postgres_store_accounts.cc
// (users, orgs, keys, clients) and postgres_store_routes.cc (catalog, user
// services); the schema is in postgres_nyxid_store.cc.

#include <memory>
#include <string>

#include "nyxid/nodes/node_store.h"
#include "nyxid/store/nyxid_store.h"
#include "store/pg_pool.h"

namespace aevatar::nyxid {

class PostgresNyxidStore final : public NyxidStore {
 public:
  // `at_rest_key` (32 bytes) seals the catalog's provider API keys; `pool`
  // reaches a database migrated by OpenPostgresNyxid.
  PostgresNyxidStore(std::shared_ptr<store::PgPool> pool, std::string at_rest_key)
      : at_rest_key_(std::move(at_rest_key)), pool_(std::move(pool)) {}

  absl::Status InsertUser(const User& user) override;
  absl::Status UpdateUser(const User& user) override;
  absl::StatusOr<User> FindUserByName(const std::string& username) override;
  absl::StatusOr<User> FindUserById(const std::string& id) override;
  absl::StatusOr<std::vector<User>> ListUsers() override;

  absl::Status InsertOrg(const Org& org) override;
  absl::StatusOr<Org> FindOrgBySlug(const std::string& slug) override;
  absl::StatusOr<Org> FindOrgById(const std::string& id) override;
  absl::Status PutMembership(const Membership& membership) override;
  absl::StatusOr<std::vector<Membership>> MembershipsOfUser(const std::string& user_id) override;

  absl::Status PutCatalogService(const CatalogService& service) override;
  absl::StatusOr<CatalogService> FindCatalogService(const std::string& id) override;
  absl::StatusOr<std::vector<CatalogService>> ListCatalog() override;

  absl::Status InsertUserService(const UserService& service) override;
  absl::StatusOr<UserService> FindUserService(const std::string& id) override;
  absl::Status UpdateUserService(const UserService& service) override;
  absl::StatusOr<std::vector<UserService>> ListUserServices(
      const std::vector<Owner>& owners) override;
  absl::StatusOr<std::vector<UserService>> ListAutoConnected(
      const std::string& catalog_service_id) override;
  absl::StatusOr<UserService> FindUserServiceBySlug(const Owner& owner,
                                                    const std::string& slug) override;

  absl::Status InsertAgentKey(const AgentKeyRecord& key) override;
  absl::StatusOr<AgentKeyRecord> FindAgentKeyByHash(const std::string& key_hash_hex) override;
  absl::StatusOr<std::vector<AgentKeyRecord>> ListAgentKeys(const std::string& user_id) override;
  absl::Status RevokeAgentKey(const std::string& user_id, const std::string& key_id,
                              int64_t now_ms) override;

  absl::Status PutClient(const RegisteredClient& client) override;
  absl::StatusOr<RegisteredClient> FindClientBySecretHash(
      const std::string& secret_sha256_hex) override;

  absl::Status AppendAdminAudit(const AdminAuditEntry& entry) override;
  absl::StatusOr<std::vector<AdminAuditEntry>> ListAdminAudit(int64_t after_seq,
                                                              int limit) override;

  absl::StatusOr<int64_t> FactsGeneration() override;
  absl::Status Ping() override;

 private:
  const std::string at_rest_key_;
  const std::shared_ptr<store::PgPool> pool_;  // thread-safe; shared with the node store
};

// The NodeStore on `pool` (nodes/postgres_node_store.cc); schema migrated.
std::unique_ptr<NodeStore> NewPostgresNodeStore(std::shared_ptr<store::PgPool> pool);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_STORE_POSTGRES_NYXID_STORE_H_
