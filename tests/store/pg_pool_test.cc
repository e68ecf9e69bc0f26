// PgPool's error contract and the shared migration lock, on the process's
// private PostgreSQL cluster (tests/testing/postgres_cluster.h).
#include "store/pg_pool.h"

#include <array>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "store/migration.h"
#include "store/pg_migrations.h"
#include "testing/postgres_test_database.h"

namespace aevatar::store {
namespace {

std::unique_ptr<PgPool> PoolOn(const std::string& url) {
  auto pool = PgPool::Connect(url, 2);
  EXPECT_TRUE(pool.ok()) << pool.status();
  return pool.ok() ? std::move(*pool) : nullptr;
}

absl::Status CreateTable(PgPool& pool) {
  return pool.Transact([](pqxx::work& tx) {
    tx.exec("CREATE TABLE t (id TEXT PRIMARY KEY)");
    return absl::OkStatus();
  });
}

absl::Status Exec(PgPool& pool, const std::string& sql, const std::string& param) {
  return pool.Transact([&](pqxx::work& tx) {
    tx.exec_params(sql, param);
    return absl::OkStatus();
  });
}

TEST(PgPool, AValueThatIsNotUtf8IsTheCallersErrorAndIsNotQuoted) {
  const std::string url = testing::FreshPostgresDatabase();
  if (url.empty()) return;
  auto pool = PoolOn(url);
  ASSERT_NE(pool, nullptr);
  ASSERT_TRUE(CreateTable(*pool).ok());
  const absl::Status s = Exec(*pool, "SELECT id FROM t WHERE id = $1", "run-\xff\xfe-x");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_EQ(std::string(s.message()).find("run-"), std::string::npos) << s;
}

TEST(PgPool, AUniqueViolationNamesTheConstraintButNotTheKey) {
  const std::string url = testing::FreshPostgresDatabase();
  if (url.empty()) return;
  auto pool = PoolOn(url);
  ASSERT_NE(pool, nullptr);
  ASSERT_TRUE(CreateTable(*pool).ok());
  ASSERT_TRUE(Exec(*pool, "INSERT INTO t VALUES ($1)", "planted-key-4711").ok());
  const absl::Status s = Exec(*pool, "INSERT INTO t VALUES ($1)", "planted-key-4711");
  EXPECT_TRUE(absl::IsAlreadyExists(s)) << s;
  EXPECT_NE(std::string(s.message()).find("t_pkey"), std::string::npos) << s;
  EXPECT_EQ(std::string(s.message()).find("planted-key-4711"), std::string::npos) << s;
}

// The services sharing one database start together on it: each component
// creates the version table on first use, and none may lose that race.
TEST(PgMigrations, ComponentsMigratingOneEmptyDatabaseAtOnceAllSucceed) {
  SKIP_WITHOUT_POSTGRES();
  static constexpr Migration kOne[] = {{1, "CREATE TABLE IF NOT EXISTS m_a (x INT)"}};
  static constexpr Migration kTwo[] = {{1, "CREATE TABLE IF NOT EXISTS m_b (x INT)"}};
  static constexpr Migration kThree[] = {{1, "CREATE TABLE IF NOT EXISTS m_c (x INT)"}};
  const std::array<std::span<const Migration>, 3> sets = {kOne, kTwo, kThree};
  for (int round = 0; round < 3; ++round) {
    const std::string url = testing::FreshPostgresDatabase();
    ASSERT_FALSE(url.empty());
    std::array<absl::Status, 3> applied;
    std::latch start(3);
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back([&, i] {
        auto pool = PgPool::Connect(url, 1);
        start.arrive_and_wait();
        applied[i] = pool.ok() ? ApplyPgMigrations(**pool, "component" + std::to_string(i), sets[i])
                               : pool.status();
      });
    }
    for (std::thread& t : threads) t.join();
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(applied[i].ok()) << i << ": " << applied[i];
  }
}

}  // namespace
}  // namespace aevatar::store
