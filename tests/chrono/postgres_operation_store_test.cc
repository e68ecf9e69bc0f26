// The PostgreSQL operation store: the contract suite on a private cluster,
// then what only a shared database adds (stores as replicas on one
// database, migrations racing, an unreachable server, a lost connection).
#include "chrono/postgres_operation_store.h"

#include <array>
#include <latch>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "operation_store_suite.h"
#include "store/pg_migrations.h"
#include "store/pg_pool.h"
#include "testing/loopback_port.h"
#include "testing/postgres_test_database.h"

namespace aevatar::chrono {
namespace {

using S = OperationStatus;
using testing::FreshPostgresDatabase;
using testing::SharedPostgresCluster;

std::unique_ptr<OperationStore> OpenOrNull(const std::string& url) {
  if (url.empty()) return nullptr;
  absl::StatusOr<std::unique_ptr<OperationStore>> store = OpenPostgresOperationStore(url);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Postgres, OperationStoreSuite, ::testing::Values(OperationStoreFactory([] {
                           return OpenOrNull(FreshPostgresDatabase());
                         })));

// Two stores on one database stand for two replicas.
class PostgresReplicas : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = FreshPostgresDatabase();
    if (IsSkipped()) return;
    ASSERT_FALSE(url_.empty());
    a_ = OpenOrNull(url_);
    b_ = OpenOrNull(url_);
    ASSERT_NE(a_, nullptr);
    ASSERT_NE(b_, nullptr);
  }
  std::string url_;
  std::unique_ptr<OperationStore> a_, b_;
};

TEST_F(PostgresReplicas, FiftyConcurrentSameKeyCreatesOverTwoStoresMakeOne) {
  ExpectConcurrentSameKeyCreatesMakeOne(
      [this](int i) -> OperationStore& { return i % 2 == 0 ? *a_ : *b_; }, 50);
  EXPECT_EQ(*b_->CountWithStatus(S::kQueued), 1);
}

TEST_F(PostgresReplicas, EachStoreSeesTheOthersWritesAndSealedBytesStayAsTheyAre) {
  Operation op = NewOperation("op_1", "alice", "k");
  op.sealed_credentials = std::string("\0\x01\xff sealed", 10);
  ASSERT_TRUE(a_->CreateOrGet(op).ok());
  ExpectSameOperation(*b_->Get("op_1"), op);
  absl::StatusOr<std::optional<Operation>> claimed = b_->ClaimNext("runner-b", 10, kTestLeaseMs);
  ASSERT_TRUE(claimed.ok() && claimed->has_value()) << claimed.status();
  EXPECT_FALSE(a_->ClaimNext("runner-a", 11, kTestLeaseMs)->has_value());  // handed out once
  EXPECT_TRUE(a_->RequestCancel("op_1", 12)->cancel_requested);
  EXPECT_TRUE(b_->Get("op_1")->cancel_requested);
  EXPECT_EQ(a_->MarkRunningUncertain("runner-a", 13).value_or(-1), 0);  // not a's run
  EXPECT_EQ(b_->Finish("op_1", S::kCancelled, "{}", 14)->status, S::kCancelled);
}

TEST_F(PostgresReplicas, ARenewalRacingASettlerEitherKeepsTheRunOrLosesItNeverBoth) {
  constexpr int kRounds = 30;
  for (int i = 0; i < kRounds; ++i) {
    const std::string id = absl::StrCat("op_", i);
    ASSERT_TRUE(a_->CreateOrGet(NewOperation(id, "o", id)).ok());
    ASSERT_TRUE(a_->ClaimNext("runner-a", 0, kTestLeaseMs).ok());
  }
  // Every lease ends at kTestLeaseMs: replica a renews each at that instant
  // while replica b settles lapsed leases at the same instant.
  std::vector<bool> kept(kRounds, false);
  std::latch start(2);
  std::thread renewer([&] {
    start.arrive_and_wait();
    for (int i = 0; i < kRounds; ++i) {
      absl::StatusOr<std::vector<LeaseRenewal>> renewed =
          a_->RenewLeases("runner-a", {absl::StrCat("op_", i)}, kTestLeaseMs, kTestLeaseMs);
      ASSERT_TRUE(renewed.ok()) << renewed.status();
      kept[i] = renewed->size() == 1;
    }
  });
  std::thread settler([&] {
    start.arrive_and_wait();
    for (int i = 0; i < kRounds; ++i) ASSERT_TRUE(b_->SettleExpiredLeases(kTestLeaseMs).ok());
  });
  renewer.join();
  settler.join();
  for (int i = 0; i < kRounds; ++i) {
    const Operation op = *b_->Get(absl::StrCat("op_", i));
    // Whoever got the row first decided: a renewed run is running with the
    // new lease; a lost one is settled and the runner was told.
    if (kept[i]) {
      EXPECT_EQ(op.status, S::kRunning) << i;
      EXPECT_EQ(op.lease_expires_at_ms, 2 * kTestLeaseMs) << i;
    } else {
      EXPECT_EQ(op.status, S::kOutcomeUncertain) << i;
    }
  }
}

TEST_F(PostgresReplicas, ExpiryRunsOnOneReplicaAtATime) {
  Operation op = NewOperation("op_1", "o", "k");
  op.expires_at_ms = 100;
  ASSERT_TRUE(a_->CreateOrGet(op).ok());
  ASSERT_TRUE(a_->ClaimNext("r", 10, kTestLeaseMs).ok());
  ASSERT_TRUE(a_->Finish("op_1", S::kSucceeded, "{}", 20).ok());
  // Another replica's sweep holds the expiry lock: this one expires nothing.
  absl::StatusOr<std::unique_ptr<store::PgPool>> other = store::PgPool::Connect(url_);
  ASSERT_TRUE(other.ok()) << other.status();
  absl::Status held = (*other)->Transact([&](pqxx::work& tx) {
    tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext($2))", store::kPgAdvisoryLockSpace,
                   "chrono.expiry");
    EXPECT_EQ(b_->ExpireOld(1000, 0).value_or(-1), 0);
    return absl::OkStatus();
  });
  ASSERT_TRUE(held.ok()) << held;
  EXPECT_FALSE(a_->Get("op_1")->expired);
  EXPECT_EQ(b_->ExpireOld(1000, 0).value_or(-1), 1);  // the lock is free again
  EXPECT_TRUE(a_->Get("op_1")->expired);
}

TEST_F(PostgresReplicas, AStoreReconnectsAfterItsConnectionsAreKilled) {
  ASSERT_TRUE(a_->CreateOrGet(NewOperation("op_1", "o", "k")).ok());
  absl::StatusOr<std::unique_ptr<store::PgPool>> admin = store::PgPool::Connect(url_);
  ASSERT_TRUE(admin.ok()) << admin.status();
  int killed = 0;
  ASSERT_TRUE((*admin)
                  ->Transact([&](pqxx::work& tx) {
                    killed = tx.exec(
                                   "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                   "WHERE pid <> pg_backend_pid() AND datname = current_database()")
                                 .size();
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_GE(killed, 2);  // a_'s and b_'s idle connections
  absl::StatusOr<Operation> after = a_->Get("op_1");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->id, "op_1");
  EXPECT_TRUE(b_->Ping().ok());
}

TEST(PostgresOperationStore, TwoStoresMigratingOneEmptyDatabaseAtOnceBothSucceed) {
  for (int round = 0; round < 5; ++round) {
    const std::string url = FreshPostgresDatabase();
    if (IsSkipped()) return;
    ASSERT_FALSE(url.empty());
    std::array<absl::StatusOr<std::unique_ptr<OperationStore>>, 2> stores = {
        absl::UnknownError("not run"), absl::UnknownError("not run")};
    std::latch start(2);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        stores[i] = OpenPostgresOperationStore(url);
      });
    }
    for (std::thread& t : threads) t.join();
    ASSERT_TRUE(stores[0].ok()) << stores[0].status();
    ASSERT_TRUE(stores[1].ok()) << stores[1].status();
    absl::StatusOr<std::unique_ptr<store::PgPool>> pool = store::PgPool::Connect(url);
    ASSERT_TRUE(pool.ok());
    EXPECT_EQ(store::PgSchemaVersion(**pool, "chrono").value_or(-1), 3);
    ASSERT_TRUE((*stores[0])->CreateOrGet(NewOperation("op_1", "o", "k")).ok());
    EXPECT_TRUE((*stores[1])->Get("op_1").ok());
  }
}

TEST(PostgresOperationStore, AnUnreachableDatabaseIsAClearErrorWithoutThePassword) {
  const uint16_t closed_port = testing::FreeLoopbackPort();  // nothing listens there
  ASSERT_NE(closed_port, 0);
  absl::StatusOr<std::unique_ptr<OperationStore>> store = OpenPostgresOperationStore(
      absl::StrCat("postgresql://chrono:s3cret-pw@127.0.0.1:", closed_port, "/chrono"));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("cannot connect to PostgreSQL"), std::string::npos)
      << store.status();
  EXPECT_NE(store.status().message().find(std::to_string(closed_port)), std::string::npos)
      << store.status();  // libpq names the address it tried
  EXPECT_EQ(store.status().message().find("s3cret-pw"), std::string::npos);
}

TEST(PostgresOperationStore, ANewerSchemaThanTheBinaryIsRefused) {
  const std::string url = FreshPostgresDatabase();
  if (IsSkipped()) return;
  ASSERT_NE(OpenOrNull(url), nullptr);
  absl::StatusOr<std::unique_ptr<store::PgPool>> pool = store::PgPool::Connect(url);
  ASSERT_TRUE(pool.ok());
  ASSERT_TRUE((*pool)
                  ->Transact([](pqxx::work& tx) {
                    tx.exec("UPDATE aevatar_schema SET version = 99 WHERE component = 'chrono'");
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(OpenPostgresOperationStore(url).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace aevatar::chrono
