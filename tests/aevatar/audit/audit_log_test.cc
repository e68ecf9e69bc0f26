#include "aevatar/audit/audit_log.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "aevatar/audit/audit_record.h"
#include "aevatar/audit/sqlite_audit_log.h"
#include "audit/terminal_record.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "store/sqlite_db.h"

namespace aevatar::orchestrator {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "audit_log_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    log_ = OpenOrDie();
  }
  void TearDown() override {
    log_.reset();
    fs::remove_all(dir_);
  }

  std::string DbPath() const { return (dir_ / "audit.db").string(); }

  std::unique_ptr<AuditLog> OpenOrDie() {
    absl::StatusOr<std::unique_ptr<AuditLog>> log = OpenSqliteAuditLog(DbPath());
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? std::move(*log) : nullptr;
  }

  AppendOutcome AppendOrDie(const AuditRecord& r, AuditLog* log = nullptr) {
    absl::StatusOr<AppendOutcome> outcome = (log ? log : log_.get())->Append(r);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.value_or(AppendOutcome::kConflict);
  }

  std::vector<AuditRecord> RunOrDie(const std::string& run_id) {
    absl::StatusOr<std::vector<AuditRecord>> records = log_->ForRun(run_id);
    EXPECT_TRUE(records.ok()) << records.status();
    return records.value_or(std::vector<AuditRecord>{});
  }

  fs::path dir_;
  std::unique_ptr<AuditLog> log_;
};

TEST(AuditContentHash, TimestampsTraceAndIdsOutsideIdentityDoNotChangeHash) {
  const std::string base = ContentHash(TerminalRecord());
  AuditRecord r = TerminalRecord();
  r.occurred_at_ms = 123456789;
  r.recorded_at_ms = 987654321;
  r.trace = {"t", "s", "tp", "ts"};
  r.record_id = "aud_other";
  r.content_hash = "sha256:stale";
  EXPECT_EQ(ContentHash(r), base);
}

TEST(AuditContentHash, KeyOrderInFactDoesNotChangeHash) {
  AuditRecord a = TerminalRecord();
  AuditRecord b = TerminalRecord();
  a.fact = json::parse(R"({"a":1,"b":{"x":[1,2],"y":"z"},"c":null})");
  b.fact = json::parse(R"({"c":null,"b":{"y":"z","x":[1,2]},"a":1})");
  EXPECT_EQ(ContentHash(a), ContentHash(b));
  b.fact = json::parse(R"({"c":null,"b":{"y":"z","x":[2,1]},"a":1})");  // arrays keep order
  EXPECT_NE(ContentHash(a), ContentHash(b));
}

// Pins the persisted algorithm: rows written by an older binary must keep
// matching their replays after an upgrade (rolling-upgrade compatibility).
TEST(AuditContentHash, AlgorithmIsSha256OverSortedCompactBusinessJson) {
  AuditRecord r;
  r.kind = "workflow.stop";
  r.run_id = "run_9";
  r.fact = json::parse(R"({"reason":"user","deadline_unix_ms":120000})");
  const std::string canonical =
      R"({"approval_id":"","call_id":"","causation_id":"","correlation_id":"",)"
      R"("fact":{"deadline_unix_ms":120000,"reason":"user"},"kind":"workflow.stop",)"
      R"("request_id":"","run_id":"run_9","step_id":"","workflow_id":""})";
  EXPECT_EQ(ContentHash(r), "sha256:" + base::Sha256Hex(canonical));
}

TEST(AuditSemanticKey, IsUnambiguous) {
  AuditRecord a = TerminalRecord();
  AuditRecord b = TerminalRecord();
  a.run_id = "r|s";
  a.step_id = "t";
  b.run_id = "r";
  b.step_id = "s|t";
  EXPECT_NE(SemanticKey(a), SemanticKey(b));
  AuditRecord c = TerminalRecord();
  c.fact = json::object();
  c.correlation_id = "other";
  EXPECT_EQ(SemanticKey(c), SemanticKey(TerminalRecord()));
}

TEST_F(AuditLogTest, TableHasNoUpdateOrDeletePath) {
  ASSERT_EQ(AppendOrDie(TerminalRecord()), AppendOutcome::kAppended);
  absl::StatusOr<store::Database> db = store::Database::Open(DbPath());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<int64_t> updated = db->Run("UPDATE audit_records SET fact = '{}'");
  EXPECT_FALSE(updated.ok());
  EXPECT_NE(updated.status().message().find("append-only"), absl::string_view::npos)
      << updated.status();
  EXPECT_FALSE(db->Run("DELETE FROM audit_records").ok());
  EXPECT_FALSE(db->Run("REPLACE INTO audit_records (seq) VALUES (1)").ok());
  const std::vector<AuditRecord> rows = RunOrDie("run_1");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].fact, TerminalRecord().fact);
}

// The source of `relative_path` in the tree.
std::string SourceText(const char* relative_path) {
  const fs::path source = fs::path(AEVATAR_SOURCE_DIR) / relative_path;
  std::ifstream in(source);
  EXPECT_TRUE(in.good()) << "source not found at " << source;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The implementations themselves issue no statement that could rewrite a record.
TEST(AuditLogSource, IssuesNoUpdateDeleteOrReplace) {
  const std::string text = SourceText("src/aevatar/audit/sqlite_audit_log.cc");
  for (const char* forbidden :
       {"UPDATE audit_records", "DELETE FROM", "REPLACE INTO", "OR REPLACE", "ON CONFLICT"}) {
    EXPECT_EQ(text.find(forbidden), std::string::npos) << forbidden;
  }
}

TEST(AuditLogSource, PostgresIssuesNoUpdateDeleteOrTruncate) {
  const std::string text = SourceText("src/aevatar/postgres/postgres_audit_log.cc");
  ASSERT_NE(text.find("DO NOTHING"), std::string::npos);  // the one conflict path
  for (const char* forbidden : {"UPDATE aevatar_audit_records", "DELETE FROM", "DO UPDATE",
                                "TRUNCATE aevatar_audit_records"}) {
    EXPECT_EQ(text.find(forbidden), std::string::npos) << forbidden;
  }
}

}  // namespace
}  // namespace aevatar::orchestrator
