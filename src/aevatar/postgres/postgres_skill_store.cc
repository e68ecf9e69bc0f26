#include <utility>

#include "aevatar/postgres/postgres_stores.h"
#include "aevatar/skills/skill_rows.h"
#include "store/pg_migrations.h"
#include "store/pg_pool.h"

namespace aevatar::orchestrator {
namespace {

using store::PgPool;

// Released migrations are never edited; append new ones.
constexpr store::Migration kSkillMigrations[] = {
    {1, R"sql(
CREATE TABLE aevatar_skill_names (
  name          TEXT   NOT NULL PRIMARY KEY,
  publisher     TEXT   NOT NULL CHECK (publisher <> ''),
  created_at_ms BIGINT NOT NULL
);
CREATE TABLE aevatar_skill_versions (
  name            TEXT   NOT NULL REFERENCES aevatar_skill_names (name),
  version         TEXT   NOT NULL,
  description     TEXT   NOT NULL,
  digest          TEXT   NOT NULL,
  manifest_yaml   TEXT   NOT NULL,
  assets          TEXT   NOT NULL,
  publisher       TEXT   NOT NULL,
  published_at_ms BIGINT NOT NULL,
  PRIMARY KEY (name, version)
);
CREATE TABLE aevatar_skill_mounts (
  mount_id      TEXT   NOT NULL PRIMARY KEY,
  owner         TEXT   NOT NULL,
  name          TEXT   NOT NULL,
  version       TEXT   NOT NULL,
  digest        TEXT   NOT NULL,
  state         TEXT   NOT NULL CHECK (state IN ('mounting', 'mounted', 'failed')),
  workflows     TEXT   NOT NULL,
  error_code    TEXT   NOT NULL,
  error_detail  TEXT   NOT NULL,
  diagnostic_id TEXT   NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
)sql"},
};

class PostgresSkillStore final : public SkillStore {
 public:
  explicit PostgresSkillStore(std::shared_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  absl::StatusOr<PublishOutcome> Publish(const SkillVersion& skill) override {
    return pool_->TransactFor<PublishOutcome>(
        [&](pqxx::work& tx) -> absl::StatusOr<PublishOutcome> {
          // The name's row, created by the first publisher and then locked:
          // publishers of one name (on any replica) take turns from here.
          tx.exec_params(
              "INSERT INTO aevatar_skill_names (name, publisher, created_at_ms) "
              "VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
              skill.name, skill.publisher, skill.published_at_ms);
          StoredSkillFacts stored;
          pqxx::result owner = tx.exec_params(
              "SELECT publisher FROM aevatar_skill_names WHERE name = $1 FOR UPDATE", skill.name);
          if (!owner.empty()) stored.name_owner = owner[0][0].as<std::string>();
          pqxx::result digest = tx.exec_params(
              "SELECT digest FROM aevatar_skill_versions WHERE name = $1 AND version = $2",
              skill.name, skill.version);
          if (!digest.empty()) stored.version_digest = digest[0][0].as<std::string>();
          auto outcome = DecidePublish(stored, skill);
          if (!outcome.ok() || *outcome == PublishOutcome::kUnchanged) return outcome;
          tx.exec_params(
              "INSERT INTO aevatar_skill_versions (name, version, description, digest, "
              "manifest_yaml, assets, publisher, published_at_ms) "
              "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
              skill.name, skill.version, skill.description, skill.digest,
              skill.bundle.manifest_yaml, AssetsColumn(skill.bundle.assets), skill.publisher,
              skill.published_at_ms);
          return PublishOutcome::kCreated;
        });
  }

  absl::StatusOr<std::vector<SkillVersion>> ListVersions(const std::string& name) override {
    using Versions = std::vector<SkillVersion>;
    return pool_->TransactFor<Versions>([&](pqxx::work& tx) -> absl::StatusOr<Versions> {
      pqxx::result rows = tx.exec_params(
          "SELECT name, version, description, digest, publisher, published_at_ms "
          "FROM aevatar_skill_versions WHERE $1 = '' OR name = $1 "
          "ORDER BY name COLLATE \"C\", published_at_ms, version COLLATE \"C\"",
          name);
      Versions versions;
      for (const pqxx::row& r : rows) {
        SkillVersion skill;
        skill.name = r[0].as<std::string>();
        skill.version = r[1].as<std::string>();
        skill.description = r[2].as<std::string>();
        skill.digest = r[3].as<std::string>();
        skill.publisher = r[4].as<std::string>();
        skill.published_at_ms = r[5].as<int64_t>();
        versions.push_back(std::move(skill));
      }
      return versions;
    });
  }

  absl::StatusOr<SkillVersion> GetVersion(const std::string& name,
                                          const std::string& version) override {
    return pool_->TransactFor<SkillVersion>([&](pqxx::work& tx) -> absl::StatusOr<SkillVersion> {
      pqxx::result rows = tx.exec_params(
          "SELECT description, digest, manifest_yaml, assets, publisher, published_at_ms "
          "FROM aevatar_skill_versions WHERE name = $1 AND version = $2",
          name, version);
      if (rows.empty()) return SkillNotFound(name, version);
      const pqxx::row& r = rows[0];
      SkillVersion skill;
      skill.name = name;
      skill.version = version;
      skill.description = r[0].as<std::string>();
      skill.digest = r[1].as<std::string>();
      skill.bundle.manifest_yaml = r[2].as<std::string>();
      auto assets = AssetsFromColumn(r[3].as<std::string>());
      if (!assets.ok()) return assets.status();
      skill.bundle.assets = std::move(*assets);
      skill.publisher = r[4].as<std::string>();
      skill.published_at_ms = r[5].as<int64_t>();
      return skill;
    });
  }

  absl::Status PutMount(const SkillMount& m) override {
    return pool_->Transact([&](pqxx::work& tx) {
      tx.exec_params(
          "INSERT INTO aevatar_skill_mounts (mount_id, owner, name, version, digest, state, "
          "workflows, error_code, error_detail, diagnostic_id, created_at_ms, updated_at_ms) "
          "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
          "ON CONFLICT (mount_id) DO UPDATE SET owner = EXCLUDED.owner, name = EXCLUDED.name, "
          "version = EXCLUDED.version, digest = EXCLUDED.digest, state = EXCLUDED.state, "
          "workflows = EXCLUDED.workflows, error_code = EXCLUDED.error_code, "
          "error_detail = EXCLUDED.error_detail, diagnostic_id = EXCLUDED.diagnostic_id, "
          "created_at_ms = EXCLUDED.created_at_ms, updated_at_ms = EXCLUDED.updated_at_ms",
          m.mount_id, m.owner, m.name, m.version, m.digest, m.state, MountWorkflowsColumn(m),
          m.error_code, m.error_detail, m.diagnostic_id, m.created_at_ms, m.updated_at_ms);
      return absl::OkStatus();
    });
  }

  absl::StatusOr<SkillMount> GetMount(const std::string& mount_id) override {
    return pool_->TransactFor<SkillMount>([&](pqxx::work& tx) -> absl::StatusOr<SkillMount> {
      pqxx::result rows = tx.exec_params(
          "SELECT owner, name, version, digest, state, workflows, error_code, error_detail, "
          "diagnostic_id, created_at_ms, updated_at_ms FROM aevatar_skill_mounts "
          "WHERE mount_id = $1",
          mount_id);
      if (rows.empty()) return MountNotFound();
      const pqxx::row& r = rows[0];
      SkillMount m;
      m.mount_id = mount_id;
      m.owner = r[0].as<std::string>();
      m.name = r[1].as<std::string>();
      m.version = r[2].as<std::string>();
      m.digest = r[3].as<std::string>();
      m.state = r[4].as<std::string>();
      auto workflows = MountWorkflowsFromColumn(r[5].as<std::string>());
      if (!workflows.ok()) return workflows.status();
      m.workflows = std::move(*workflows);
      m.error_code = r[6].as<std::string>();
      m.error_detail = r[7].as<std::string>();
      m.diagnostic_id = r[8].as<std::string>();
      m.created_at_ms = r[9].as<int64_t>();
      m.updated_at_ms = r[10].as<int64_t>();
      return m;
    });
  }

 private:
  std::shared_ptr<PgPool> pool_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SkillStore>> OpenPostgresSkillStore(
    std::shared_ptr<store::PgPool> pool) {
  if (pool == nullptr) return absl::InvalidArgumentError("the skill store needs a database");
  if (absl::Status s = store::ApplyPgMigrations(*pool, "aevatar.skills", kSkillMigrations);
      !s.ok()) {
    return s;
  }
  return std::make_unique<PostgresSkillStore>(std::move(pool));
}

}  // namespace aevatar::orchestrator
