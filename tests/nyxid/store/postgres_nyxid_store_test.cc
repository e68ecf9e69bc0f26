// NyxID's PostgreSQL store: the contract suite (nyxid_store_suite.h) on a
// private cluster, then what replicas sharing one database add: signing
// keys read and rotated by several brokers, the at-rest key they must
// share, names that leave room for other services, an unreachable server.
#include <latch>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "gtest/gtest.h"
#include "nyxid/store/postgres_nyxid.h"
#include "nyxid/tokens/signing_keys.h"
#include "nyxid_store_suite.h"
#include "store/pg_pool.h"
#include "testing/loopback_port.h"
#include "testing/postgres_test_database.h"

namespace aevatar::nyxid {
namespace {

using testing::SharedPostgresCluster;

const std::string kAtRestKey(32, 'k');

NyxidStores OpenOn(const std::string& url, const std::string& at_rest_key = kAtRestKey) {
  NyxidStores stores;
  if (url.empty()) return stores;
  absl::StatusOr<PostgresNyxid> pg = OpenPostgresNyxid(url, at_rest_key);
  EXPECT_TRUE(pg.ok()) << pg.status();
  if (!pg.ok()) return stores;
  stores.store = std::move(pg->store);
  stores.nodes = std::move(pg->nodes);
  stores.signing_keys = std::move(pg->signing_keys);
  return stores;
}

NyxidStoresOpener MakePostgres() {
  const std::string url = testing::FreshPostgresDatabase();
  return [url] { return OpenOn(url); };
}

INSTANTIATE_TEST_SUITE_P(Postgres, NyxidStoreSuite,
                         ::testing::Values(NyxidBackendFactory{"postgres", MakePostgres}));

// Two openings of one database stand for two `nyxid serve` replicas.
class PostgresReplicas : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = testing::FreshPostgresDatabase();
    if (IsSkipped()) return;
    ASSERT_FALSE(url_.empty());
    a_ = OpenOn(url_);
    b_ = OpenOn(url_);
    ASSERT_NE(a_.store, nullptr);
    ASSERT_NE(b_.store, nullptr);
  }

  std::unique_ptr<KeyRing> Ring(NyxidStores& stores) {
    auto ring = KeyRing::LoadOrCreate(std::move(stores.signing_keys), now_, 3900);
    EXPECT_TRUE(ring.ok()) << ring.status();
    return ring.ok() ? std::move(*ring) : nullptr;
  }

  // The kids `ring` publishes, current first.
  static std::vector<std::string> Kids(const KeyRing& ring, int64_t now) {
    const base::Jwks published = ring.Published(now);
    std::vector<std::string> kids;
    for (const base::Jwk& key : published.keys()) kids.push_back(key.kid);
    return kids;
  }

  // The kids `ring` publishes, polled until they equal `want` or a generous
  // deadline (a loaded machine) passes.
  static std::vector<std::string> KidsOnceEqual(const KeyRing& ring, int64_t now,
                                                const std::vector<std::string>& want) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (true) {
      std::vector<std::string> kids = Kids(ring, now);
      if (kids == want || absl::Now() > deadline) return kids;
      absl::SleepFor(absl::Milliseconds(100));
    }
  }

  const int64_t now_ = base::NowUnixSecs();
  std::string url_;
  NyxidStores a_, b_;
};

TEST_F(PostgresReplicas, BothReplicasStartWithTheSameKeysAndARotationReachesTheOther) {
  std::unique_ptr<KeyRing> a = Ring(a_);
  std::unique_ptr<KeyRing> b = Ring(b_);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->current_kid(), b->current_kid());
  EXPECT_EQ(Kids(*a, now_), Kids(*b, now_));

  const std::string old_kid = a->current_kid();
  ASSERT_TRUE(a->Rotate(now_).ok());
  const std::string new_kid = a->current_kid();
  ASSERT_NE(new_kid, old_kid);
  // The key A signs with now was B's published upcoming key: B verifies at once.
  EXPECT_TRUE(b->Lookup(new_kid, now_).ok());
  // Within the refresh bound B publishes exactly what A does, and signs with
  // the same key.
  EXPECT_EQ(KidsOnceEqual(*b, now_, Kids(*a, now_)), Kids(*a, now_));
  EXPECT_EQ(b->current_kid(), new_kid);
}

TEST_F(PostgresReplicas, RotationsOnTwoReplicasAtOnceAreBothApplied) {
  std::unique_ptr<KeyRing> a = Ring(a_);
  std::unique_ptr<KeyRing> b = Ring(b_);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const std::string first_kid = a->current_kid();
  std::latch start(2);
  absl::Status rotated_a, rotated_b;
  std::thread ta([&] {
    start.arrive_and_wait();
    rotated_a = a->Rotate(now_);
  });
  std::thread tb([&] {
    start.arrive_and_wait();
    rotated_b = b->Rotate(now_);
  });
  ta.join();
  tb.join();
  ASSERT_TRUE(rotated_a.ok()) << rotated_a;
  ASSERT_TRUE(rotated_b.ok()) << rotated_b;
  // Serialised, not lost: two retired keys (the first and the one the first
  // rotation promoted), the current one and the upcoming one.
  NyxidStores c = OpenOn(url_);
  std::unique_ptr<KeyRing> fresh = Ring(c);
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(Kids(*fresh, now_).size(), 4u);
  EXPECT_NE(fresh->current_kid(), first_kid);
  EXPECT_EQ(KidsOnceEqual(*a, now_, Kids(*fresh, now_)), Kids(*fresh, now_));
  EXPECT_EQ(KidsOnceEqual(*b, now_, Kids(*fresh, now_)), Kids(*fresh, now_));
}

TEST_F(PostgresReplicas, TheSigningKeysAreSealedInTheDatabase) {
  std::unique_ptr<KeyRing> a = Ring(a_);
  ASSERT_NE(a, nullptr);
  auto pool = store::PgPool::Connect(url_, 1);
  ASSERT_TRUE(pool.ok()) << pool.status();
  auto document = (*pool)->TransactFor<std::string>([](pqxx::work& tx) {
    return absl::StatusOr<std::string>(
        tx.exec("SELECT document FROM nyxid_signing_keys")[0][0].as<std::string>());
  });
  ASSERT_TRUE(document.ok()) << document.status();
  EXPECT_FALSE(document->empty());
  EXPECT_EQ(document->find("secret_key"), std::string::npos);
  EXPECT_EQ(document->find(a->current_kid()), std::string::npos);
}

TEST_F(PostgresReplicas, AReplicaWithAnotherAtRestKeyIsRefusedNamingTheKeyFile) {
  std::unique_ptr<KeyRing> a = Ring(a_);
  ASSERT_NE(a, nullptr);
  NyxidStores stranger = OpenOn(url_, std::string(32, 'z'));
  ASSERT_NE(stranger.signing_keys, nullptr);
  auto ring = KeyRing::LoadOrCreate(std::move(stranger.signing_keys), now_, 3900);
  EXPECT_TRUE(absl::IsFailedPrecondition(ring.status())) << ring.status();
  EXPECT_NE(ring.status().message().find("at-rest.key"), std::string::npos) << ring.status();
}

TEST_F(PostgresReplicas, AnAgentKeyRevokedOnOneReplicaIsRevokedOnTheOther) {
  ASSERT_TRUE(a_.store->InsertUser(NewUser("usr_a", "alice")).ok());
  AgentKeyRecord key;
  key.id = "ak_1";
  key.user_id = "usr_a";
  key.key_hash_hex = std::string(64, 'f');
  ASSERT_TRUE(a_.store->InsertAgentKey(key).ok());
  EXPECT_EQ(b_.store->FindAgentKeyByHash(key.key_hash_hex)->revoked_at_ms, std::nullopt);
  ASSERT_TRUE(a_.store->RevokeAgentKey("usr_a", "ak_1", 5000).ok());
  // No cache: B's very next read sees it.
  EXPECT_EQ(b_.store->FindAgentKeyByHash(key.key_hash_hex)->revoked_at_ms,
            std::optional<int64_t>(5000));
}

TEST_F(PostgresReplicas, ConcurrentSameUsernameSignUpsOnTwoReplicasMakeOneUser) {
  constexpr int kThreads = 16;
  std::latch start(kThreads);
  std::vector<absl::Status> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      NyxidStore& store = i % 2 == 0 ? *a_.store : *b_.store;
      results[i] = store.InsertUser(NewUser("usr_" + std::to_string(i), "alice"));
    });
  }
  for (std::thread& t : threads) t.join();
  int created = 0;
  for (const absl::Status& result : results) {
    if (result.ok()) {
      ++created;
    } else {
      EXPECT_TRUE(absl::IsAlreadyExists(result)) << result;
      // The server's DETAIL line (which quotes the username) is dropped.
      EXPECT_EQ(result.message().find("alice"), std::string::npos) << result;
    }
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(a_.store->ListUsers()->size(), 1u);
}

TEST_F(PostgresReplicas, EveryTableIsNamedNyxid) {
  auto pool = store::PgPool::Connect(url_, 1);
  ASSERT_TRUE(pool.ok()) << pool.status();
  auto others = (*pool)->TransactFor<std::vector<std::string>>([](pqxx::work& tx) {
    std::vector<std::string> names;
    for (const pqxx::row& row :
         tx.exec("SELECT table_name FROM information_schema.tables WHERE table_schema = "
                 "'public' AND table_name NOT LIKE 'nyxid\\_%' AND table_name <> "
                 "'aevatar_schema'")) {
      names.push_back(row[0].as<std::string>());
    }
    return absl::StatusOr<std::vector<std::string>>(names);
  });
  ASSERT_TRUE(others.ok()) << others.status();
  EXPECT_TRUE(others->empty()) << others->front();
}

TEST(PostgresNyxid, ReplicasMigratingOneEmptyDatabaseAtOnceAllSucceed) {
  const std::string url = testing::FreshPostgresDatabase();
  if (::testing::Test::IsSkipped()) return;
  ASSERT_FALSE(url.empty());
  constexpr int kReplicas = 4;
  std::latch start(kReplicas);
  std::vector<absl::Status> results(kReplicas);
  std::vector<std::string> kids(kReplicas);
  std::vector<std::thread> threads;
  for (int i = 0; i < kReplicas; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      auto opened = OpenPostgresNyxid(url, kAtRestKey);
      if (!opened.ok()) {
        results[i] = opened.status();
        return;
      }
      auto ring = KeyRing::LoadOrCreate(std::move(opened->signing_keys), 1'700'000'000, 3900);
      results[i] = ring.status();
      if (ring.ok()) kids[i] = (*ring)->current_kid();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& result : results) EXPECT_TRUE(result.ok()) << result;
  // Replicas creating the first signing keys at once agree on one key.
  for (const std::string& kid : kids) EXPECT_EQ(kid, kids[0]);
}

TEST(PostgresNyxid, AnUnreachableDatabaseIsUnavailableWithoutThePassword) {
  const uint16_t closed_port = testing::FreeLoopbackPort();  // nothing listens there
  ASSERT_NE(closed_port, 0);
  auto opened = OpenPostgresNyxid(
      absl::StrCat("postgresql://nyxid:s3cret-pw@127.0.0.1:", closed_port, "/nyxid"), kAtRestKey);
  ASSERT_FALSE(opened.ok());
  EXPECT_TRUE(absl::IsUnavailable(opened.status())) << opened.status();
  EXPECT_NE(opened.status().message().find("cannot connect to PostgreSQL"), std::string::npos);
  EXPECT_EQ(opened.status().message().find("s3cret-pw"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::nyxid
