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

// SQLite-only (the store contract is in stores/audit_log_suite_test.cc;
// PostgreSQL's triggers in stores/postgres_stores_test.cc).
TEST(SqliteAuditLog, TableHasNoUpdateOrDeletePath) {
  std::string dir = (fs::temp_directory_path() / "audit_log_test.XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/audit.db";
  absl::StatusOr<std::unique_ptr<AuditLog>> log = OpenSqliteAuditLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ((*log)->Append(TerminalRecord()).value_or(AppendOutcome::kConflict),
            AppendOutcome::kAppended);
  {
    absl::StatusOr<store::Database> db = store::Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    absl::StatusOr<int64_t> updated = db->Run("UPDATE audit_records SET fact = '{}'");
    EXPECT_FALSE(updated.ok());
    EXPECT_NE(updated.status().message().find("append-only"), absl::string_view::npos)
        << updated.status();
    EXPECT_FALSE(db->Run("DELETE FROM audit_records").ok());
    EXPECT_FALSE(db->Run("REPLACE INTO audit_records (seq) VALUES (1)").ok());
  }
  absl::StatusOr<std::vector<AuditRecord>> rows = (*log)->ForRun("run_1");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].fact, TerminalRecord().fact);
  log->reset();
  fs::remove_all(dir);
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
