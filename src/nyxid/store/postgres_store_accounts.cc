#include "absl/strings/str_cat.h"
#include "nyxid/store/pg_rows.h"
#include "nyxid/store/postgres_nyxid_store.h"
#include "nyxid/store/store_rows.h"

// Users, organisations, memberships, Agent Keys and registered clients.
namespace aevatar::nyxid {

using pg_rows::PgRow;
using rows::kKeyColumns;
using rows::kUserColumns;

absl::Status PostgresNyxidStore::InsertUser(const User& user) {
  return pg_rows::Exec(*pool_, "user",
                       absl::StrCat("INSERT INTO nyxid_users (", kUserColumns,
                                    ") VALUES ($1, $2, $3, $4, $5, $6)"),
                       user.id, user.username, user.password_hash, user.platform_admin,
                       user.created_at_ms, user.tokens_not_before_ms)
      .status();
}

absl::Status PostgresNyxidStore::UpdateUser(const User& user) {
  auto changed =
      pg_rows::Exec(*pool_, "user",
                    "UPDATE nyxid_users SET password_hash = $2, platform_admin = $3, "
                    "tokens_not_before_ms = $4 WHERE id = $1",
                    user.id, user.password_hash, user.platform_admin, user.tokens_not_before_ms);
  if (!changed.ok()) return changed.status();
  return *changed == 1 ? absl::OkStatus() : absl::NotFoundError("user not found");
}

absl::StatusOr<User> PostgresNyxidStore::FindUserByName(const std::string& username) {
  return pg_rows::One<User>(
      *pool_, "user",
      absl::StrCat("SELECT ", kUserColumns, " FROM nyxid_users WHERE username = $1"),
      rows::UserFromRow<PgRow>, username);
}

absl::StatusOr<User> PostgresNyxidStore::FindUserById(const std::string& id) {
  return pg_rows::One<User>(
      *pool_, "user", absl::StrCat("SELECT ", kUserColumns, " FROM nyxid_users WHERE id = $1"),
      rows::UserFromRow<PgRow>, id);
}

absl::StatusOr<std::vector<User>> PostgresNyxidStore::ListUsers() {
  return pg_rows::All<User>(
      *pool_, "user",
      absl::StrCat("SELECT ", kUserColumns, " FROM nyxid_users ORDER BY created_at_ms, id"),
      rows::UserFromRow<PgRow>);
}

absl::Status PostgresNyxidStore::InsertOrg(const Org& org) {
  return pg_rows::Exec(*pool_, "organisation",
                       "INSERT INTO nyxid_orgs (id, slug, name) VALUES ($1, $2, $3)", org.id,
                       org.slug, org.name)
      .status();
}

absl::StatusOr<Org> PostgresNyxidStore::FindOrgBySlug(const std::string& slug) {
  return pg_rows::One<Org>(*pool_, "organisation",
                           "SELECT id, slug, name FROM nyxid_orgs WHERE slug = $1",
                           rows::OrgFromRow<PgRow>, slug);
}

absl::StatusOr<Org> PostgresNyxidStore::FindOrgById(const std::string& id) {
  return pg_rows::One<Org>(*pool_, "organisation",
                           "SELECT id, slug, name FROM nyxid_orgs WHERE id = $1",
                           rows::OrgFromRow<PgRow>, id);
}

absl::Status PostgresNyxidStore::PutMembership(const Membership& membership) {
  return pg_rows::Exec(*pool_, "membership",
                       "INSERT INTO nyxid_memberships (org_id, user_id, role) VALUES ($1, $2, $3) "
                       "ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role",
                       membership.org_id, membership.user_id,
                       std::string(OrgRoleName(membership.role)))
      .status();
}

absl::StatusOr<std::vector<Membership>> PostgresNyxidStore::MembershipsOfUser(
    const std::string& user_id) {
  auto found = pg_rows::All<std::optional<Membership>>(
      *pool_, "membership",
      "SELECT org_id, user_id, role FROM nyxid_memberships WHERE user_id = $1 ORDER BY org_id",
      rows::MembershipFromRow<PgRow>, user_id);
  if (!found.ok()) return found.status();
  return rows::KnownMemberships(*found);
}

absl::Status PostgresNyxidStore::InsertAgentKey(const AgentKeyRecord& key) {
  return pg_rows::Exec(*pool_, "agent key",
                       absl::StrCat("INSERT INTO nyxid_agent_keys (", kKeyColumns,
                                    ") VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)"),
                       key.id, key.user_id, key.label, key.key_hash_hex, key.key_prefix,
                       rows::StringListColumn(key.allowed_services), key.created_at_ms)
      .status();
}

absl::StatusOr<AgentKeyRecord> PostgresNyxidStore::FindAgentKeyByHash(
    const std::string& key_hash_hex) {
  return pg_rows::One<AgentKeyRecord>(
      *pool_, "agent key",
      absl::StrCat("SELECT ", kKeyColumns, " FROM nyxid_agent_keys WHERE key_hash = $1"),
      rows::KeyFromRow<PgRow>, key_hash_hex);
}

absl::StatusOr<std::vector<AgentKeyRecord>> PostgresNyxidStore::ListAgentKeys(
    const std::string& user_id) {
  return pg_rows::All<AgentKeyRecord>(
      *pool_, "agent key",
      absl::StrCat("SELECT ", kKeyColumns,
                   " FROM nyxid_agent_keys WHERE user_id = $1 ORDER BY created_at_ms, id"),
      rows::KeyFromRow<PgRow>, user_id);
}

absl::Status PostgresNyxidStore::RevokeAgentKey(const std::string& user_id,
                                                const std::string& key_id, int64_t now_ms) {
  // One statement: the key's row either is this user's (revoked now, or
  // already: the first instant stays) or is not found.
  return pg_rows::One<bool>(
             *pool_, "agent key",
             "UPDATE nyxid_agent_keys SET revoked_at_ms = COALESCE(revoked_at_ms, $3) "
             "WHERE id = $1 AND user_id = $2 RETURNING TRUE",
             [](const PgRow&) { return true; }, key_id, user_id, now_ms)
      .status();
}

absl::Status PostgresNyxidStore::PutClient(const RegisteredClient& client) {
  return pg_rows::Exec(*pool_, "client",
                       "INSERT INTO nyxid_clients (name, secret_sha256) VALUES ($1, $2) "
                       "ON CONFLICT (name) DO UPDATE SET secret_sha256 = EXCLUDED.secret_sha256",
                       client.name, client.secret_sha256_hex)
      .status();
}

absl::StatusOr<RegisteredClient> PostgresNyxidStore::FindClientBySecretHash(
    const std::string& secret_sha256_hex) {
  return pg_rows::One<RegisteredClient>(
      *pool_, "client", "SELECT name, secret_sha256 FROM nyxid_clients WHERE secret_sha256 = $1",
      rows::ClientFromRow<PgRow>, secret_sha256_hex);
}

}  // namespace aevatar::nyxid
