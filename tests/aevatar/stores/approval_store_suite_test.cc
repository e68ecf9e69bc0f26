// The ApprovalStore contract, on SQLite and PostgreSQL alike: decided once,
// expiry, owner scoping, survival across a reopen (an aevatar restart, or
// another replica), sealed calls.
#include <atomic>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "aevatar/approvals/approval_store.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "stores/store_backends.h"

namespace aevatar::orchestrator {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;
constexpr char kPrompt[] = "PLANTED-prompt-text-4e1f: fix the flaky test";

Approval PendingApproval(const std::string& id, const std::string& owner) {
  Approval approval;
  approval.id = id;
  approval.owner = owner;
  approval.tool = "codex_exec";
  approval.call = {
      {"target",
       {{"kind", "private_ssh"}, {"private_ssh", {{"service", "box"}, {"principal", "alice"}}}}},
      {"prompt", kPrompt},
      {"timeout_secs", 300}};
  approval.call_digest = ApprovalCallDigest(approval.call);
  approval.created_at_ms = kNow;
  approval.expires_at_ms = kNow + 60'000;
  return approval;
}

class ApprovalStoreSuite : public ::testing::TestWithParam<TestBackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam()();
    if (IsSkipped()) return;
    ASSERT_NE(backend_, nullptr);
    Reopen();
  }
  void Reopen() {
    store_.reset();
    auto store = backend_->backend().OpenApprovals(std::make_shared<VaultKeyring>(key_));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  std::unique_ptr<TestBackend> backend_;
  std::string key_ = base::RandomBytes(32);
  std::unique_ptr<ApprovalStore> store_;
};

AEVATAR_STORE_SUITE_ON_BOTH_BACKENDS(ApprovalStoreSuite);

TEST_P(ApprovalStoreSuite, APendingApprovalSurvivesARestartAndIsDecidedOnce) {
  ASSERT_TRUE(store_->Create(PendingApproval("appr_1", "alice-id")).ok());
  Reopen();
  auto read = store_->Get("alice-id", "appr_1");
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_EQ((*read)->state, ApprovalState::kPending);
  EXPECT_EQ((*read)->call["prompt"], kPrompt);
  EXPECT_EQ((*read)->call_digest, ApprovalCallDigest((*read)->call));

  auto approved = store_->Decide("alice-id", "appr_1", /*approve=*/true, kNow + 1000);
  ASSERT_TRUE(approved.ok()) << approved.status();
  EXPECT_EQ(approved->state, ApprovalState::kApproved);
  EXPECT_EQ(approved->decided_at_ms, kNow + 1000);
  for (bool approve : {true, false}) {
    auto again = store_->Decide("alice-id", "appr_1", approve, kNow + 2000);
    EXPECT_EQ(base::ApiCode(again.status()), "APPROVAL_ALREADY_DECIDED");
  }
  Reopen();
  EXPECT_EQ((*store_->Get("alice-id", "appr_1"))->state, ApprovalState::kApproved);
}

TEST_P(ApprovalStoreSuite, AnApprovedApprovalIsUsedOnce) {
  ASSERT_TRUE(store_->Create(PendingApproval("appr_1", "alice-id")).ok());
  EXPECT_FALSE(*store_->Consume("alice-id", "appr_1"));  // pending: nothing to use
  ASSERT_TRUE(store_->Decide("alice-id", "appr_1", /*approve=*/true, kNow).ok());
  EXPECT_FALSE(*store_->Consume("mallory-id", "appr_1"));
  EXPECT_TRUE(*store_->Consume("alice-id", "appr_1"));
  EXPECT_FALSE(*store_->Consume("alice-id", "appr_1"));
  EXPECT_EQ((*store_->Get("alice-id", "appr_1"))->state, ApprovalState::kUsed);
  EXPECT_EQ(*store_->CountPending("alice-id", kNow), 0);
}

TEST_P(ApprovalStoreSuite, AnApprovalPastItsExpiryCannotBeDecided) {
  ASSERT_TRUE(store_->Create(PendingApproval("appr_1", "alice-id")).ok());
  const Approval pending = **store_->Get("alice-id", "appr_1");
  EXPECT_EQ(EffectiveState(pending, kNow + 59'999), ApprovalState::kPending);
  EXPECT_EQ(EffectiveState(pending, kNow + 60'000), ApprovalState::kExpired);
  auto late = store_->Decide("alice-id", "appr_1", /*approve=*/true, kNow + 60'000);
  EXPECT_EQ(base::ApiCode(late.status()), "APPROVAL_EXPIRED");
  EXPECT_EQ((*store_->Get("alice-id", "appr_1"))->state, ApprovalState::kExpired);
  EXPECT_EQ(base::ApiCode(store_->Decide("alice-id", "appr_1", false, kNow).status()),
            "APPROVAL_ALREADY_DECIDED");
}

TEST_P(ApprovalStoreSuite, AnotherUserCanNeitherSeeNorDecideIt) {
  ASSERT_TRUE(store_->Create(PendingApproval("appr_1", "alice-id")).ok());
  auto seen = store_->Get("mallory-id", "appr_1");
  ASSERT_TRUE(seen.ok());
  EXPECT_FALSE(seen->has_value());
  EXPECT_TRUE(store_->List("mallory-id", 100)->empty());
  EXPECT_EQ(base::ApiCode(store_->Decide("mallory-id", "appr_1", true, kNow).status()),
            "APPROVAL_NOT_FOUND");
  EXPECT_EQ((*store_->Get("alice-id", "appr_1"))->state, ApprovalState::kPending);
}

TEST_P(ApprovalStoreSuite, ListsTheOwnersNewestFirst) {
  for (int i = 0; i < 3; ++i) {
    Approval approval = PendingApproval("appr_" + std::to_string(i), "alice-id");
    approval.created_at_ms = kNow + i;
    ASSERT_TRUE(store_->Create(approval).ok());
  }
  ASSERT_TRUE(store_->Create(PendingApproval("appr_other", "bob-id")).ok());
  auto list = store_->List("alice-id", 2);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, "appr_2");
  EXPECT_EQ((*list)[1].id, "appr_1");
  EXPECT_FALSE(store_->Create(PendingApproval("appr_1", "alice-id")).ok());
}

TEST_P(ApprovalStoreSuite, TheCallIsSealedAtRestAndBoundToItsRow) {
  ASSERT_TRUE(store_->Create(PendingApproval("appr_1", "alice-id")).ok());
  store_.reset();
  const std::string bytes = backend_->RawBytes();
  EXPECT_NE(bytes.find("alice-id"), std::string::npos);  // the dump holds the rows
  EXPECT_EQ(bytes.find("PLANTED-prompt"), std::string::npos);
  EXPECT_EQ(bytes.find("alice\""), std::string::npos);
  // Another vault key opens nothing: a DataLoss error, never a wrong call.
  key_ = base::RandomBytes(32);
  Reopen();
  EXPECT_TRUE(absl::IsDataLoss(store_->Get("alice-id", "appr_1").status()));
}

TEST_P(ApprovalStoreSuite, TwoStoresDecidingAndUsingAtOnceDoEachOnce) {
  ASSERT_TRUE(store_->Create(PendingApproval("appr_1", "alice-id")).ok());
  auto other = backend_->backend().OpenApprovals(std::make_shared<VaultKeyring>(key_));
  ASSERT_TRUE(other.ok()) << other.status();
  ApprovalStore* stores[] = {store_.get(), other->get()};
  constexpr int kThreads = 8;
  std::atomic<int> decided{0}, consumed{0};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      if (stores[i % 2]->Decide("alice-id", "appr_1", /*approve=*/true, kNow).ok()) ++decided;
      auto used = stores[i % 2]->Consume("alice-id", "appr_1");
      if (used.ok() && *used) ++consumed;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(decided.load(), 1);
  EXPECT_EQ(consumed.load(), 1);
  EXPECT_EQ((*store_->Get("alice-id", "appr_1"))->state, ApprovalState::kUsed);
}

}  // namespace
}  // namespace aevatar::orchestrator
