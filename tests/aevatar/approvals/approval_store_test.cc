// The approval store on a real SQLite file: decided once, expiry, owner
// scoping, survival across a reopen (an aevatar restart), sealed calls.
#include "aevatar/approvals/approval_store.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "base/api_error.h"
#include "base/crypto.h"
#include "gtest/gtest.h"

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

class ApprovalStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/var/tmp/approvals-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    path_ = path;
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }
  void Reopen() {
    store_.reset();
    auto store = OpenSqliteApprovalStore(path_, std::make_shared<VaultKeyring>(key_));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  std::string path_;
  std::string key_ = base::RandomBytes(32);
  std::unique_ptr<ApprovalStore> store_;
};

TEST_F(ApprovalStoreTest, APendingApprovalSurvivesARestartAndIsDecidedOnce) {
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

TEST_F(ApprovalStoreTest, AnApprovedApprovalIsUsedOnce) {
  ASSERT_TRUE(store_->Create(PendingApproval("appr_1", "alice-id")).ok());
  EXPECT_FALSE(*store_->Consume("alice-id", "appr_1"));  // pending: nothing to use
  ASSERT_TRUE(store_->Decide("alice-id", "appr_1", /*approve=*/true, kNow).ok());
  EXPECT_FALSE(*store_->Consume("mallory-id", "appr_1"));
  EXPECT_TRUE(*store_->Consume("alice-id", "appr_1"));
  EXPECT_FALSE(*store_->Consume("alice-id", "appr_1"));
  EXPECT_EQ((*store_->Get("alice-id", "appr_1"))->state, ApprovalState::kUsed);
  EXPECT_EQ(*store_->CountPending("alice-id", kNow), 0);
}

TEST_F(ApprovalStoreTest, AnApprovalPastItsExpiryCannotBeDecided) {
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

TEST_F(ApprovalStoreTest, AnotherUserCanNeitherSeeNorDecideIt) {
  ASSERT_TRUE(store_->Create(PendingApproval("appr_1", "alice-id")).ok());
  auto seen = store_->Get("mallory-id", "appr_1");
  ASSERT_TRUE(seen.ok());
  EXPECT_FALSE(seen->has_value());
  EXPECT_TRUE(store_->List("mallory-id", 100)->empty());
  EXPECT_EQ(base::ApiCode(store_->Decide("mallory-id", "appr_1", true, kNow).status()),
            "APPROVAL_NOT_FOUND");
  EXPECT_EQ((*store_->Get("alice-id", "appr_1"))->state, ApprovalState::kPending);
}

TEST_F(ApprovalStoreTest, ListsTheOwnersNewestFirst) {
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

TEST_F(ApprovalStoreTest, TheCallIsSealedAtRestAndBoundToItsRow) {
  ASSERT_TRUE(store_->Create(PendingApproval("appr_1", "alice-id")).ok());
  store_.reset();
  std::stringstream bytes;
  for (const char* suffix : {"", "-wal"}) bytes << std::ifstream(path_ + suffix).rdbuf();
  EXPECT_EQ(bytes.str().find("PLANTED-prompt"), std::string::npos);
  EXPECT_EQ(bytes.str().find("alice\""), std::string::npos);
  // Another vault key opens nothing: a DataLoss error, never a wrong call.
  key_ = base::RandomBytes(32);
  Reopen();
  EXPECT_TRUE(absl::IsDataLoss(store_->Get("alice-id", "appr_1").status()));
}

}  // namespace
}  // namespace aevatar::orchestrator
