#include "absl/strings/str_cat.h"
#include "nyxid/store/sqlite_nyxid_store.h"
#include "nyxid/store/sqlite_rows.h"
#include "nyxid/store/store_rows.h"

// Users, organisations, memberships, Agent Keys and registered clients.
namespace aevatar::nyxid {

using rows::kKeyColumns;
using rows::kUserColumns;
using sqlite_rows::All;
using sqlite_rows::One;
using sqlite_rows::SqliteRow;

absl::Status SqliteNyxidStore::InsertUser(const User& user) {
  absl::MutexLock lock(&mu_);
  return db_
      .Run(absl::StrCat("INSERT INTO users (", kUserColumns, ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
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
      db_.Prepare(absl::StrCat("SELECT ", kUserColumns, " FROM users WHERE username = ?1"),
                  {username}),
      rows::UserFromRow<SqliteRow>, "user");
}

absl::StatusOr<User> SqliteNyxidStore::FindUserById(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return One<User>(
      db_.Prepare(absl::StrCat("SELECT ", kUserColumns, " FROM users WHERE id = ?1"), {id}),
      rows::UserFromRow<SqliteRow>, "user");
}

absl::StatusOr<std::vector<User>> SqliteNyxidStore::ListUsers() {
  absl::MutexLock lock(&mu_);
  return All<User>(
      db_.Prepare(absl::StrCat("SELECT ", kUserColumns, " FROM users ORDER BY created_at_ms, id")),
      rows::UserFromRow<SqliteRow>);
}

absl::Status SqliteNyxidStore::InsertOrg(const Org& org) {
  absl::MutexLock lock(&mu_);
  return db_
      .Run("INSERT INTO orgs (id, slug, name) VALUES (?1, ?2, ?3)", {org.id, org.slug, org.name})
      .status();
}

absl::StatusOr<Org> SqliteNyxidStore::FindOrgBySlug(const std::string& slug) {
  absl::MutexLock lock(&mu_);
  return One<Org>(db_.Prepare("SELECT id, slug, name FROM orgs WHERE slug = ?1", {slug}),
                  rows::OrgFromRow<SqliteRow>, "organisation");
}

absl::StatusOr<Org> SqliteNyxidStore::FindOrgById(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return One<Org>(db_.Prepare("SELECT id, slug, name FROM orgs WHERE id = ?1", {id}),
                  rows::OrgFromRow<SqliteRow>, "organisation");
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
  auto found = All<std::optional<Membership>>(
      db_.Prepare(
          "SELECT org_id, user_id, role FROM memberships WHERE user_id = ?1 ORDER BY org_id",
          {user_id}),
      rows::MembershipFromRow<SqliteRow>);
  if (!found.ok()) return found.status();
  return rows::KnownMemberships(*found);
}

absl::Status SqliteNyxidStore::InsertAgentKey(const AgentKeyRecord& key) {
  const std::string allowed = rows::StringListColumn(key.allowed_services);
  absl::MutexLock lock(&mu_);
  return db_
      .Run(absl::StrCat("INSERT INTO agent_keys (", kKeyColumns,
                        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL)"),
           {key.id, key.user_id, key.label, key.key_hash_hex, key.key_prefix, allowed,
            key.created_at_ms})
      .status();
}

absl::StatusOr<AgentKeyRecord> SqliteNyxidStore::FindAgentKeyByHash(
    const std::string& key_hash_hex) {
  absl::MutexLock lock(&mu_);
  return One<AgentKeyRecord>(
      db_.Prepare(absl::StrCat("SELECT ", kKeyColumns, " FROM agent_keys WHERE key_hash = ?1"),
                  {key_hash_hex}),
      rows::KeyFromRow<SqliteRow>, "agent key");
}

absl::StatusOr<std::vector<AgentKeyRecord>> SqliteNyxidStore::ListAgentKeys(
    const std::string& user_id) {
  absl::MutexLock lock(&mu_);
  return All<AgentKeyRecord>(
      db_.Prepare(absl::StrCat("SELECT ", kKeyColumns,
                               " FROM agent_keys WHERE user_id = ?1 ORDER BY created_at_ms, id"),
                  {user_id}),
      rows::KeyFromRow<SqliteRow>);
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
      rows::ClientFromRow<SqliteRow>, "client");
}

}  // namespace aevatar::nyxid
