#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/skills/skill_rows.h"
#include "aevatar/skills/skill_store.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace aevatar::orchestrator {
namespace {

using store::Database;
using store::Transaction;

// Released migrations are never edited; append new ones.
constexpr store::Migration kSkillMigrations[] = {
    {1, R"sql(
CREATE TABLE skill_names (
  name          TEXT    NOT NULL PRIMARY KEY,
  publisher     TEXT    NOT NULL CHECK (publisher <> ''),
  created_at_ms INTEGER NOT NULL
) STRICT;
CREATE TABLE skill_versions (
  name            TEXT    NOT NULL REFERENCES skill_names (name),
  version         TEXT    NOT NULL,
  description     TEXT    NOT NULL,
  digest          TEXT    NOT NULL,
  manifest_yaml   TEXT    NOT NULL,
  assets          TEXT    NOT NULL,
  publisher       TEXT    NOT NULL,
  published_at_ms INTEGER NOT NULL,
  PRIMARY KEY (name, version)
) STRICT;
CREATE TABLE skill_mounts (
  mount_id      TEXT    NOT NULL PRIMARY KEY,
  owner         TEXT    NOT NULL,
  name          TEXT    NOT NULL,
  version       TEXT    NOT NULL,
  digest        TEXT    NOT NULL,
  state         TEXT    NOT NULL CHECK (state IN ('mounting', 'mounted', 'failed')),
  workflows     TEXT    NOT NULL,
  error_code    TEXT    NOT NULL,
  error_detail  TEXT    NOT NULL,
  diagnostic_id TEXT    NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
) STRICT;
)sql"},
};

// One connection behind one mutex: publishing and mounting are rare.
class SqliteSkillStore final : public SkillStore {
 public:
  explicit SqliteSkillStore(Database db) : db_(std::move(db)) {}

  absl::StatusOr<PublishOutcome> Publish(const SkillVersion& skill) override {
    absl::MutexLock lock(&mu_);
    auto txn = Transaction::Begin(db_);
    if (!txn.ok()) return txn.status();
    StoredSkillFacts stored;
    auto owner = db_.Prepare("SELECT publisher FROM skill_names WHERE name = ?1", {skill.name});
    if (!owner.ok()) return owner.status();
    auto row = owner->Step();
    if (!row.ok()) return row.status();
    if (*row) stored.name_owner = owner->ColumnText(0);
    auto digest = db_.Prepare("SELECT digest FROM skill_versions WHERE name = ?1 AND version = ?2",
                              {skill.name, skill.version});
    if (!digest.ok()) return digest.status();
    row = digest->Step();
    if (!row.ok()) return row.status();
    if (*row) stored.version_digest = digest->ColumnText(0);
    auto outcome = DecidePublish(stored, skill);
    if (!outcome.ok() || *outcome == PublishOutcome::kUnchanged) return outcome;
    if (!stored.name_owner) {
      auto named = db_.Run(
          "INSERT INTO skill_names (name, publisher, created_at_ms) "
          "VALUES (?1, ?2, ?3)",
          {skill.name, skill.publisher, skill.published_at_ms});
      if (!named.ok()) return named.status();
    }
    auto inserted = db_.Run(
        "INSERT INTO skill_versions (name, version, description, digest, manifest_yaml, "
        "assets, publisher, published_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        {skill.name, skill.version, skill.description, skill.digest, skill.bundle.manifest_yaml,
         AssetsColumn(skill.bundle.assets), skill.publisher, skill.published_at_ms});
    if (!inserted.ok()) return inserted.status();
    if (absl::Status st = txn->Commit(); !st.ok()) return st;
    return PublishOutcome::kCreated;
  }

  absl::StatusOr<std::vector<SkillVersion>> ListVersions(const std::string& name) override {
    absl::MutexLock lock(&mu_);
    auto stmt = db_.Prepare(
        "SELECT name, version, description, digest, publisher, published_at_ms "
        "FROM skill_versions WHERE ?1 = '' OR name = ?1 ORDER BY name, published_at_ms, version",
        {name});
    if (!stmt.ok()) return stmt.status();
    std::vector<SkillVersion> versions;
    for (;;) {
      auto row = stmt->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      SkillVersion skill;
      skill.name = stmt->ColumnText(0);
      skill.version = stmt->ColumnText(1);
      skill.description = stmt->ColumnText(2);
      skill.digest = stmt->ColumnText(3);
      skill.publisher = stmt->ColumnText(4);
      skill.published_at_ms = stmt->ColumnInt64(5);
      versions.push_back(std::move(skill));
    }
    return versions;
  }

  absl::StatusOr<SkillVersion> GetVersion(const std::string& name,
                                          const std::string& version) override {
    absl::MutexLock lock(&mu_);
    auto stmt = db_.Prepare(
        "SELECT description, digest, manifest_yaml, assets, publisher, published_at_ms "
        "FROM skill_versions WHERE name = ?1 AND version = ?2",
        {name, version});
    if (!stmt.ok()) return stmt.status();
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return SkillNotFound(name, version);
    SkillVersion skill;
    skill.name = name;
    skill.version = version;
    skill.description = stmt->ColumnText(0);
    skill.digest = stmt->ColumnText(1);
    skill.bundle.manifest_yaml = stmt->ColumnText(2);
    auto assets = AssetsFromColumn(stmt->ColumnText(3));
    if (!assets.ok()) return assets.status();
    skill.bundle.assets = std::move(*assets);
    skill.publisher = stmt->ColumnText(4);
    skill.published_at_ms = stmt->ColumnInt64(5);
    return skill;
  }

  absl::Status PutMount(const SkillMount& m) override {
    absl::MutexLock lock(&mu_);
    return db_
        .Run(
            "INSERT OR REPLACE INTO skill_mounts (mount_id, owner, name, version, digest, state, "
            "workflows, error_code, error_detail, diagnostic_id, created_at_ms, updated_at_ms) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            {m.mount_id, m.owner, m.name, m.version, m.digest, m.state, MountWorkflowsColumn(m),
             m.error_code, m.error_detail, m.diagnostic_id, m.created_at_ms, m.updated_at_ms})
        .status();
  }

  absl::StatusOr<SkillMount> GetMount(const std::string& mount_id) override {
    absl::MutexLock lock(&mu_);
    auto stmt = db_.Prepare(
        "SELECT owner, name, version, digest, state, workflows, error_code, error_detail, "
        "diagnostic_id, created_at_ms, updated_at_ms FROM skill_mounts WHERE mount_id = ?1",
        {mount_id});
    if (!stmt.ok()) return stmt.status();
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return MountNotFound();
    SkillMount m;
    m.mount_id = mount_id;
    m.owner = stmt->ColumnText(0);
    m.name = stmt->ColumnText(1);
    m.version = stmt->ColumnText(2);
    m.digest = stmt->ColumnText(3);
    m.state = stmt->ColumnText(4);
    auto workflows = MountWorkflowsFromColumn(stmt->ColumnText(5));
    if (!workflows.ok()) return workflows.status();
    m.workflows = std::move(*workflows);
    m.error_code = stmt->ColumnText(6);
    m.error_detail = stmt->ColumnText(7);
    m.diagnostic_id = stmt->ColumnText(8);
    m.created_at_ms = stmt->ColumnInt64(9);
    m.updated_at_ms = stmt->ColumnInt64(10);
    return m;
  }

 private:
  absl::Mutex mu_;
  Database db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<SkillStore>> OpenSqliteSkillStore(const std::string& path) {
  auto db = Database::Open(path);
  if (!db.ok()) return db.status();
  if (absl::Status st = store::ApplyMigrations(*db, kSkillMigrations); !st.ok()) return st;
  return std::unique_ptr<SkillStore>(new SqliteSkillStore(*std::move(db)));
}

}  // namespace aevatar::orchestrator
