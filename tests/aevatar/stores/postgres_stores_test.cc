// What only the PostgreSQL backend adds to the contracts: the audit table's
// triggers refuse any rewrite, replicas migrating one empty database at once
// both succeed, and a schema from a newer binary is refused.
#include <array>
#include <latch>
#include <thread>
#include <vector>

#include "aevatar/api/store_backend.h"
#include "aevatar/audit/audit_log.h"
#include "audit/terminal_record.h"
#include "gtest/gtest.h"
#include "store/pg_migrations.h"
#include "store/pg_pool.h"
#include "testing/postgres_test_database.h"

namespace aevatar::orchestrator {
namespace {

using testing::SharedPostgresCluster;

// Runs `sql` on `url`; returns its status.
absl::Status Exec(const std::string& url, const std::string& sql) {
  auto pool = store::PgPool::Connect(url, 1);
  if (!pool.ok()) return pool.status();
  return (*pool)->Transact([&](pqxx::work& tx) {
    tx.exec(sql);
    return absl::OkStatus();
  });
}

TEST(PostgresStores, TheAuditTableRefusesUpdateDeleteAndTruncate) {
  SKIP_WITHOUT_POSTGRES();
  const std::string url = SharedPostgresCluster().CreateDatabase();
  auto backend = StoreBackend::Open(url, "");
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto log = backend->OpenAudit();
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(*(*log)->Append(TerminalRecord()), AppendOutcome::kAppended);
  for (const char* sql : {"UPDATE aevatar_audit_records SET fact = '{}'",
                          "DELETE FROM aevatar_audit_records", "TRUNCATE aevatar_audit_records"}) {
    const absl::Status refused = Exec(url, sql);
    EXPECT_FALSE(refused.ok()) << sql;
    EXPECT_NE(refused.message().find("append-only"), absl::string_view::npos) << refused;
  }
  auto rows = (*log)->ForRun("run_1");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].fact, TerminalRecord().fact);
}

TEST(PostgresStores, ReplicasMigratingOneEmptyDatabaseAtOnceBothSucceed) {
  SKIP_WITHOUT_POSTGRES();
  for (int round = 0; round < 3; ++round) {
    const std::string url = SharedPostgresCluster().CreateDatabase();
    std::array<absl::Status, 2> opened;
    std::latch start(2);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        auto backend = StoreBackend::Open(url, "");
        if (!backend.ok()) {
          opened[i] = backend.status();
          return;
        }
        opened[i] = backend->OpenWorkflows().status();
        if (opened[i].ok()) opened[i] = backend->OpenAudit().status();
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_TRUE(opened[0].ok()) << opened[0];
    EXPECT_TRUE(opened[1].ok()) << opened[1];
    auto pool = store::PgPool::Connect(url, 1);
    ASSERT_TRUE(pool.ok());
    EXPECT_EQ(store::PgSchemaVersion(**pool, "aevatar.workflows").value_or(-1), 2);
    EXPECT_EQ(store::PgSchemaVersion(**pool, "aevatar.audit").value_or(-1), 1);
  }
}

TEST(PostgresStores, ASchemaFromANewerBinaryIsRefused) {
  SKIP_WITHOUT_POSTGRES();
  const std::string url = SharedPostgresCluster().CreateDatabase();
  auto backend = StoreBackend::Open(url, "");
  ASSERT_TRUE(backend.ok()) << backend.status();
  ASSERT_TRUE(backend->OpenWorkflows().ok());
  ASSERT_TRUE(
      Exec(url, "UPDATE aevatar_schema SET version = 99 WHERE component = 'aevatar.workflows'")
          .ok());
  EXPECT_EQ(backend->OpenWorkflows().status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace aevatar::orchestrator
