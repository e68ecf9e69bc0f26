#include "nlohmann/json.hpp"
#include "nyxid/store/sqlite_nyxid_store.h"
#include "nyxid/store/sqlite_rows.h"

// Users, organisations, memberships, Agent Keys and registered clients.
namespace aevatar::nyxid {
namespace {

constexpr char kUserColumns[] =
    "id, username, password_hash, platform_admin, created_at_ms, tokens_not_before_ms";
constexpr char kKeyColumns[] =
    "id, user_id, label, key_hash, key_prefix, allowed_services, created_at_ms, revoked_at_ms";

User UserFromRow(const store::Statement& row) {
  User user;
  user.id = row.ColumnText(0);
  user.username = row.ColumnText(1);
  user.password_hash = row.ColumnText(2);
  user.platform_admin = row.ColumnInt64(3) != 0;
  user.tokens_not_before_ms = row.ColumnInt64(5);
  user.created_at_ms = row.ColumnInt64(4);
  return user;
}

AgentKeyRecord KeyFromRow(const store::Statement& row) {
  AgentKeyRecord key;
  key.id = row.ColumnText(0);
  key.user_id = row.ColumnText(1);
  key.label = row.ColumnText(2);
  key.key_hash_hex = row.ColumnText(3);
  key.key_prefix = row.ColumnText(4);
  nlohmann::json allowed = nlohmann::json::parse(row.ColumnText(5), nullptr, false);
  if (allowed.is_array()) {
    for (const auto& entry : allowed) {
      if (entry.is_string()) key.allowed_services.push_back(entry.get<std::string>());
    }
  }
  key.created_at_ms = row.ColumnInt64(6);
  if (!row.ColumnIsNull(7)) key.revoked_at_ms = row.ColumnInt64(7);
  return key;
}

}  // namespace

using sqlite_rows::One;

absl::Status SqliteNyxidStore::InsertUser(const User& user) {
  absl::MutexLock lock(&mu_);
  return db_
      .Run(std::string("INSERT INTO users (") + kUserColumns + ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
           {user.id, user.username, user.password_hash, int64_t{user.platform_admin},
            user.created_at_ms, user.tokens_not_before_ms})
      .status();
}

absl::Status SqliteNyxidStore::UpdateUser(const User& user) {
  absl::MutexLock lock(&mu_);
  auto changed = db_.Run(
      "UPDATE users SET password_hash = ?2, platform_admin = ?3, tokens_not_before_ms = ?4 "
      "WHERE id = ?1",
      {user.id, user.password_hash, int64_t{user.platform_admin}, user.tokens_not_before_ms});
  if (!changed.ok()) return changed.status();
  return *changed == 1 ? absl::OkStatus() : absl::NotFoundError("user not found");
}

absl::StatusOr<User> SqliteNyxidStore::FindUserByName(const std::string& username) {
  absl::MutexLock lock(&mu_);
  return One<User>(
      db_.Prepare(std::string("SELECT ") + kUserColumns + " FROM users WHERE username = ?1",
                  {username}),
      UserFromRow, "user");
}

absl::StatusOr<User> SqliteNyxidStore::FindUserById(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return One<User>(
      db_.Prepare(std::string("SELECT ") + kUserColumns + " FROM users WHERE id = ?1", {id}),
      UserFromRow, "user");
}

absl::StatusOr<std::vector<User>> SqliteNyxidStore::ListUsers() {
  absl::MutexLock lock(&mu_);
  auto statement =
      db_.Prepare(std::string("SELECT ") + kUserColumns + " FROM users ORDER BY created_at_ms");
  if (!statement.ok()) return statement.status();
  std::vector<User> users;
  while (true) {
    auto has_row = statement->Step();
    if (!has_row.ok()) return has_row.status();
    if (!*has_row) break;
    users.push_back(UserFromRow(*statement));
  }
  return users;
}

absl::Status SqliteNyxidStore::InsertOrg(const Org& org) {
  absl::MutexLock lock(&mu_);
  return db_
      .Run("INSERT INTO orgs (id, slug, name) VALUES (?1, ?2, ?3)", {org.id, org.slug, org.name})
      .status();
}

absl::StatusOr<Org> SqliteNyxidStore::FindOrgBySlug(const std::string& slug) {
  absl::MutexLock lock(&mu_);
  return One<Org>(
      db_.Prepare("SELECT id, slug, name FROM orgs WHERE slug = ?1", {slug}),
      [](const store::Statement& row) {
        return Org{row.ColumnText(0), row.ColumnText(1), row.ColumnText(2)};
      },
      "organisation");
}

absl::StatusOr<Org> SqliteNyxidStore::FindOrgById(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return One<Org>(
      db_.Prepare("SELECT id, slug, name FROM orgs WHERE id = ?1", {id}),
      [](const store::Statement& row) {
        return Org{row.ColumnText(0), row.ColumnText(1), row.ColumnText(2)};
      },
      "organisation");
}

absl::Status SqliteNyxidStore::PutMembership(const Membership& membership) {
  absl::MutexLock lock(&mu_);
  const std::string role(OrgRoleName(membership.role));
  return db_
      .Run(
          "INSERT INTO memberships (org_id, user_id, role) VALUES (?1, ?2, ?3) "
          "ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role",
          {membership.org_id, membership.user_id, role})
      .status();
}

absl::StatusOr<std::vector<Membership>> SqliteNyxidStore::MembershipsOfUser(
    const std::string& user_id) {
  absl::MutexLock lock(&mu_);
  auto statement = db_.Prepare(
      "SELECT org_id, user_id, role FROM memberships WHERE user_id = ?1 ORDER BY org_id",
      {user_id});
  if (!statement.ok()) return statement.status();
  std::vector<Membership> memberships;
  while (true) {
    auto has_row = statement->Step();
    if (!has_row.ok()) return has_row.status();
    if (!*has_row) break;
    auto role = ParseOrgRole(statement->ColumnText(2));
    if (!role.ok()) continue;  // an unknown role grants nothing (fail closed)
    memberships.push_back({statement->ColumnText(0), statement->ColumnText(1), *role});
  }
  return memberships;
}

absl::Status SqliteNyxidStore::InsertAgentKey(const AgentKeyRecord& key) {
  nlohmann::json allowed = key.allowed_services;
  const std::string allowed_text = allowed.dump();
  absl::MutexLock lock(&mu_);
  return db_
      .Run(std::string("INSERT INTO agent_keys (") + kKeyColumns +
               ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL)",
           {key.id, key.user_id, key.label, key.key_hash_hex, key.key_prefix, allowed_text,
            key.created_at_ms})
      .status();
}

absl::StatusOr<AgentKeyRecord> SqliteNyxidStore::FindAgentKeyByHash(
    const std::string& key_hash_hex) {
  absl::MutexLock lock(&mu_);
  return One<AgentKeyRecord>(
      db_.Prepare(std::string("SELECT ") + kKeyColumns + " FROM agent_keys WHERE key_hash = ?1",
                  {key_hash_hex}),
      KeyFromRow, "agent key");
}

absl::StatusOr<std::vector<AgentKeyRecord>> SqliteNyxidStore::ListAgentKeys(
    const std::string& user_id) {
  absl::MutexLock lock(&mu_);
  auto statement = db_.Prepare(std::string("SELECT ") + kKeyColumns +
                                   " FROM agent_keys WHERE user_id = ?1 ORDER BY created_at_ms",
                               {user_id});
  if (!statement.ok()) return statement.status();
  std::vector<AgentKeyRecord> keys;
  while (true) {
    auto has_row = statement->Step();
    if (!has_row.ok()) return has_row.status();
    if (!*has_row) break;
    keys.push_back(KeyFromRow(*statement));
  }
  return keys;
}

absl::Status SqliteNyxidStore::RevokeAgentKey(const std::string& user_id, const std::string& key_id,
                                              int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  auto exists = db_.QueryInt64("SELECT COUNT(*) FROM agent_keys WHERE id = ?1 AND user_id = ?2",
                               {key_id, user_id});
  if (!exists.ok()) return exists.status();
  if (*exists == 0) return absl::NotFoundError("agent key not found");
  return db_
      .Run(
          "UPDATE agent_keys SET revoked_at_ms = ?3 "
          "WHERE id = ?1 AND user_id = ?2 AND revoked_at_ms IS NULL",
          {key_id, user_id, now_ms})
      .status();
}

absl::Status SqliteNyxidStore::PutClient(const RegisteredClient& client) {
  absl::MutexLock lock(&mu_);
  return db_
      .Run(
          "INSERT INTO clients (name, secret_sha256) VALUES (?1, ?2) "
          "ON CONFLICT (name) DO UPDATE SET secret_sha256 = excluded.secret_sha256",
          {client.name, client.secret_sha256_hex})
      .status();
}

absl::StatusOr<RegisteredClient> SqliteNyxidStore::FindClientBySecretHash(
    const std::string& secret_sha256_hex) {
  absl::MutexLock lock(&mu_);
  return One<RegisteredClient>(
      db_.Prepare("SELECT name, secret_sha256 FROM clients WHERE secret_sha256 = ?1",
                  {secret_sha256_hex}),
      [](const store::Statement& row) {
        return RegisteredClient{row.ColumnText(0), row.ColumnText(1)};
      },
      "client");
}

}  // namespace aevatar::nyxid
