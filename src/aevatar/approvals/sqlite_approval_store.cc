#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/approvals/approval_rows.h"
#include "aevatar/approvals/approval_store.h"
#include "base/api_error.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace aevatar::orchestrator {
namespace {

using store::Database;

// Released migrations are never edited; append new ones.
constexpr store::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE approvals (
  id            TEXT    NOT NULL PRIMARY KEY CHECK (id <> ''),
  owner         TEXT    NOT NULL CHECK (owner <> ''),
  tool          TEXT    NOT NULL,
  sealed_call   BLOB    NOT NULL,
  call_digest   TEXT    NOT NULL,
  state         TEXT    NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired')),
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  decided_at_ms INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX approvals_by_owner ON approvals (owner, created_at_ms DESC);
)sql"},
    // 'used': an approval allows one run. SQLite cannot alter a CHECK, so the
    // table is rebuilt.
    {2, R"sql(
CREATE TABLE approvals_v2 (
  id            TEXT    NOT NULL PRIMARY KEY CHECK (id <> ''),
  owner         TEXT    NOT NULL CHECK (owner <> ''),
  tool          TEXT    NOT NULL,
  sealed_call   BLOB    NOT NULL,
  call_digest   TEXT    NOT NULL,
  state         TEXT    NOT NULL
                CHECK (state IN ('pending', 'approved', 'denied', 'expired', 'used')),
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  decided_at_ms INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO approvals_v2 SELECT * FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_v2 RENAME TO approvals;
CREATE INDEX approvals_by_owner ON approvals (owner, created_at_ms DESC);
)sql"},
};

constexpr const char* kColumns = kApprovalColumns;

// One connection behind one mutex: approvals are few and human-paced.
class SqliteApprovalStore final : public ApprovalStore {
 public:
  SqliteApprovalStore(Database db, std::shared_ptr<const VaultKeyring> vault)
      : db_(std::move(db)), vault_(std::move(vault)) {}

  absl::Status Create(const Approval& approval) override {
    const std::string sealed = SealApprovalCall(*vault_, approval);
    absl::MutexLock lock(&mu_);
    return db_
        .Run(absl::StrCat("INSERT INTO approvals (", kColumns,
                          ") VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7, 0)"),
             {approval.id, approval.owner, approval.tool, store::Blob(sealed), approval.call_digest,
              approval.created_at_ms, approval.expires_at_ms})
        .status();
  }

  absl::StatusOr<std::optional<Approval>> Get(const std::string& owner,
                                              const std::string& id) override {
    absl::MutexLock lock(&mu_);
    return GetLocked(owner, id);
  }

  absl::StatusOr<std::vector<Approval>> List(const std::string& owner, int limit) override {
    absl::MutexLock lock(&mu_);
    auto stmt = db_.Prepare(absl::StrCat("SELECT ", kColumns,
                                         " FROM approvals WHERE owner = ?1 "
                                         "ORDER BY created_at_ms DESC, id LIMIT ?2"),
                            {owner, static_cast<int64_t>(limit)});
    if (!stmt.ok()) return stmt.status();
    std::vector<Approval> approvals;
    for (;;) {
      auto row = stmt->Step();
      if (!row.ok()) return row.status();
      if (!*row) return approvals;
      auto approval = FromRow(*stmt);
      if (!approval.ok()) return approval.status();
      approvals.push_back(*std::move(approval));
    }
  }

  absl::StatusOr<bool> Consume(const std::string& owner, const std::string& id) override {
    absl::MutexLock lock(&mu_);
    auto changed = db_.Run(
        "UPDATE approvals SET state = 'used' WHERE id = ?1 AND owner = ?2 AND state = 'approved'",
        {id, owner});
    if (!changed.ok()) return changed.status();
    return *changed == 1;
  }

  absl::StatusOr<int64_t> CountPending(const std::string& owner, int64_t now_ms) override {
    absl::MutexLock lock(&mu_);
    return db_.QueryInt64(
        "SELECT COUNT(*) FROM approvals WHERE (?1 = '' OR owner = ?1) AND state = 'pending' AND "
        "expires_at_ms > ?2",
        {owner, now_ms});
  }

  absl::StatusOr<Approval> Decide(const std::string& owner, const std::string& id, bool approve,
                                  int64_t now_ms) override {
    absl::MutexLock lock(&mu_);
    // Only a pending, unexpired approval of this owner changes.
    auto changed = db_.Run(
        "UPDATE approvals SET state = ?1, decided_at_ms = ?2 "
        "WHERE id = ?3 AND owner = ?4 AND state = 'pending' AND expires_at_ms > ?2",
        {std::string_view(approve ? "approved" : "denied"), now_ms, id, owner});
    if (!changed.ok()) return changed.status();
    auto current = GetLocked(owner, id);
    if (!current.ok()) return current.status();
    if (!current->has_value()) return ApprovalNotFound();
    Approval approval = **std::move(current);
    if (*changed == 1) return approval;
    if (approval.state == ApprovalState::kPending) {
      // Past its expiry: record that, so it reads the same from now on.
      auto expired = db_.Run(
          "UPDATE approvals SET state = 'expired' WHERE id = ?1 AND state = 'pending'", {id});
      if (!expired.ok()) return expired.status();
    }
    return DecideRefusal(approval);
  }

 private:
  absl::StatusOr<std::optional<Approval>> GetLocked(const std::string& owner, const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto stmt = db_.Prepare(
        absl::StrCat("SELECT ", kColumns, " FROM approvals WHERE id = ?1 AND owner = ?2"),
        {id, owner});
    if (!stmt.ok()) return stmt.status();
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return std::optional<Approval>();
    auto approval = FromRow(*stmt);
    if (!approval.ok()) return approval.status();
    return std::optional<Approval>(*std::move(approval));
  }

  absl::StatusOr<Approval> FromRow(const store::Statement& row) const {
    return ApprovalFromRow(*vault_, {row.ColumnText(0), row.ColumnText(1), row.ColumnText(2),
                                     row.ColumnBlob(3), row.ColumnText(4), row.ColumnText(5),
                                     row.ColumnInt64(6), row.ColumnInt64(7), row.ColumnInt64(8)});
  }

  absl::Mutex mu_;
  Database db_ ABSL_GUARDED_BY(mu_);
  const std::shared_ptr<const VaultKeyring> vault_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ApprovalStore>> OpenSqliteApprovalStore(
    const std::string& path, std::shared_ptr<const VaultKeyring> vault) {
  if (vault == nullptr) return absl::InvalidArgumentError("the approval store needs a vault key");
  auto db = Database::Open(path);
  if (!db.ok()) return db.status();
  if (absl::Status st = store::ApplyMigrations(*db, kMigrations); !st.ok()) return st;
  return std::unique_ptr<ApprovalStore>(new SqliteApprovalStore(*std::move(db), std::move(vault)));
}

}  // namespace aevatar::orchestrator
