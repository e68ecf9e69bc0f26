// The TriggerStore contract, on SQLite and PostgreSQL alike, and the
// scheduler over it: webhook secrets sealed at rest, a schedule slot claimed
// once across replicas, deliveries remembered for replay refusal, missed
// slots coalesced.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "aevatar/triggers/trigger_scheduler.h"
#include "aevatar/triggers/trigger_store.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "stores/store_backends.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kHookSecret[] = "whsec_PLANTED-hook-secret-91ab";
constexpr int64_t kSlotMinute = 60'000;
constexpr int64_t kSlotT0 = 1'796'222'220'000;  // a whole minute

TriggerRecord CronTrigger(const std::string& id, const std::string& expr, int64_t created) {
  TriggerRecord t;
  t.trigger_id = id;
  t.owner = "user-1";
  t.workflow_id = "wf";
  t.kind = "cron";
  t.cron = expr;
  t.created_at_ms = created;
  return t;
}

TriggerRecord HookTrigger(const std::string& id, const std::string& hook_id) {
  TriggerRecord t = CronTrigger(id, "", kSlotT0);
  t.kind = "webhook";
  t.hook_id = hook_id;
  t.secret = kHookSecret;
  return t;
}

class TriggerStoreSuite : public ::testing::TestWithParam<TestBackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam()();
    if (IsSkipped()) return;
    ASSERT_NE(backend_, nullptr);
    store_ = Open(key_);
    ASSERT_NE(store_, nullptr);
  }
  // Another handle on the same state: a restart (SQLite) or a replica.
  std::unique_ptr<TriggerStore> Open(const std::string& key) {
    auto store = backend_->backend().OpenTriggers(std::make_shared<VaultKeyring>(key));
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  std::unique_ptr<TestBackend> backend_;
  std::string key_ = base::RandomBytes(32);
  std::unique_ptr<TriggerStore> store_;
};

AEVATAR_STORE_SUITE_ON_BOTH_BACKENDS(TriggerStoreSuite);

TEST_P(TriggerStoreSuite, ReplaceKeepsKnownTriggersAndSealsSecrets) {
  ASSERT_TRUE(store_
                  ->ReplaceTriggers(
                      "user-1", "wf",
                      {CronTrigger("trg_a", "* * * * *", kSlotT0), HookTrigger("trg_h", "hook_1")})
                  .ok());
  ASSERT_TRUE(store_->ClaimSlot("trg_a", kSlotT0 + kSlotMinute).value());
  // Saved again: trg_a kept with its last slot, trg_h dropped, trg_b added.
  ASSERT_TRUE(store_
                  ->ReplaceTriggers("user-1", "wf",
                                    {CronTrigger("trg_a", "* * * * *", kSlotT0),
                                     CronTrigger("trg_b", "0 * * * *", kSlotT0 + 5)})
                  .ok());
  auto stored = Open(key_)->TriggersOf("user-1", "wf");
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 2u);
  EXPECT_EQ((*stored)[0].trigger_id, "trg_a");
  EXPECT_EQ((*stored)[0].last_slot_ms, kSlotT0 + kSlotMinute);
  EXPECT_EQ((*stored)[1].trigger_id, "trg_b");
  EXPECT_FALSE(store_->HookById("hook_1")->has_value());
  EXPECT_EQ(store_->Schedules()->size(), 2u);
  EXPECT_TRUE(store_->TriggersOf("user-2", "wf")->empty());
}

// Ids and creation times sort the other way round from the declaration,
// so only the recorded order can produce it.
TEST_P(TriggerStoreSuite, TriggersListInTheOrderTheWorkflowDeclaresThem) {
  const TriggerRecord hook = HookTrigger("trg_z", "hook_1");
  const TriggerRecord cron = CronTrigger("trg_a", "* * * * *", kSlotT0 - 1);
  ASSERT_TRUE(store_->ReplaceTriggers("user-1", "wf", {hook, cron}).ok());
  auto listed = Open(key_)->TriggersOf("user-1", "wf");
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].trigger_id, "trg_z");
  EXPECT_EQ((*listed)[1].trigger_id, "trg_a");
  // Saved again in the other order: both kept, listed as now declared.
  auto reordered =
      store_->ReconcileTriggers("user-1", "wf", [&](const std::vector<TriggerRecord>&) {
        return std::vector<TriggerRecord>{cron, hook};
      });
  ASSERT_TRUE(reordered.ok()) << reordered.status();
  listed = store_->TriggersOf("user-1", "wf");
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].trigger_id, "trg_a");
  EXPECT_EQ((*listed)[1].trigger_id, "trg_z");
}

TEST_P(TriggerStoreSuite, WebhookSecretIsSealedAndOpensOnlyWithTheVaultKey) {
  ASSERT_TRUE(store_->ReplaceTriggers("user-1", "wf", {HookTrigger("trg_h", "hook_1")}).ok());
  auto found = Open(key_)->HookById("hook_1");
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  EXPECT_EQ((*found)->secret, kHookSecret);
  EXPECT_EQ((*found)->owner, "user-1");
  EXPECT_EQ((*found)->workflow_id, "wf");
  EXPECT_FALSE(store_->HookById("hook_2")->has_value());
  const std::string bytes = backend_->RawBytes();
  EXPECT_NE(bytes.find("hook_1"), std::string::npos);  // the dump holds the row
  EXPECT_EQ(bytes.find("PLANTED-hook-secret"), std::string::npos);
  EXPECT_TRUE(absl::IsDataLoss(Open(base::RandomBytes(32))->HookById("hook_1").status()));
}

TEST_P(TriggerStoreSuite, TakenHookIdIsRefused) {
  ASSERT_TRUE(store_->ReplaceTriggers("user-1", "wf", {HookTrigger("trg_h", "hook_1")}).ok());
  TriggerRecord clash = HookTrigger("trg_other", "hook_1");
  clash.workflow_id = "wf2";
  EXPECT_TRUE(absl::IsAlreadyExists(store_->ReplaceTriggers("user-1", "wf2", {clash})));
}

TEST_P(TriggerStoreSuite, ASlotIsClaimedOnceAndNeverAnOlderOne) {
  ASSERT_TRUE(
      store_->ReplaceTriggers("user-1", "wf", {CronTrigger("trg_a", "* * * * *", kSlotT0)}).ok());
  EXPECT_TRUE(store_->ClaimSlot("trg_a", kSlotT0 + 2 * kSlotMinute).value());
  EXPECT_FALSE(store_->ClaimSlot("trg_a", kSlotT0 + 2 * kSlotMinute).value());
  EXPECT_FALSE(store_->ClaimSlot("trg_a", kSlotT0 + kSlotMinute).value());  // a lagging replica
  EXPECT_TRUE(store_->ClaimSlot("trg_a", kSlotT0 + 3 * kSlotMinute).value());
  EXPECT_FALSE(store_->ClaimSlot("trg_missing", kSlotT0).value());
}

TEST_P(TriggerStoreSuite, DeliveryIsClaimedOnceWithinItsMemory) {
  ASSERT_TRUE(store_->ClaimDelivery("hook_1", "sig_a", kSlotT0, 10 * kSlotMinute).value());
  EXPECT_FALSE(Open(key_)->ClaimDelivery("hook_1", "sig_a", kSlotT0 + 1, 10 * kSlotMinute).value());
  EXPECT_TRUE(store_->ClaimDelivery("hook_2", "sig_a", kSlotT0 + 2, 10 * kSlotMinute).value());
  // Forgotten once older than the memory (its signature is stale by then).
  EXPECT_TRUE(store_->ClaimDelivery("hook_1", "sig_a", kSlotT0 + 11 * kSlotMinute, 10 * kSlotMinute)
                  .value());
}

// Two saves of one workflow at once, on two handles (two replicas): each
// plans "keep the stored webhook, or create one". Reconciles never overlap,
// so the later one keeps the webhook the earlier one created: both answer
// the same hook, and that hook stays stored. Interleaved (read, then
// replace) the second would delete the first's hook after it was shown.
TEST_P(TriggerStoreSuite, ConcurrentReconcilesOfOneWorkflowKeepOneWebhook) {
  auto replica = Open(key_);
  ASSERT_NE(replica, nullptr);
  for (int round = 0; round < 8; ++round) {
    const std::string workflow_id = "wf-race-" + std::to_string(round);
    auto save = [&](TriggerStore* store, std::string* hook_id) {
      auto stored = store->ReconcileTriggers(
          "user-1", workflow_id, [&](const std::vector<TriggerRecord>& current) {
            // Widen the window between the read and the write.
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (!current.empty()) return current;
            TriggerRecord hook = HookTrigger(base::RandomId("trg_"), base::RandomId("hook_"));
            hook.workflow_id = workflow_id;
            return std::vector<TriggerRecord>{hook};
          });
      ASSERT_TRUE(stored.ok()) << stored.status();
      ASSERT_EQ(stored->size(), 1u);
      *hook_id = stored->front().hook_id;
    };
    std::string first, second;
    std::thread a(save, store_.get(), &first);
    std::thread b(save, replica.get(), &second);
    a.join();
    b.join();
    EXPECT_EQ(first, second);
    auto now = store_->TriggersOf("user-1", workflow_id);
    ASSERT_TRUE(now.ok()) << now.status();
    ASSERT_EQ(now->size(), 1u);
    EXPECT_EQ(now->front().hook_id, first);
    EXPECT_EQ(now->front().secret, kHookSecret);
  }
}

// A delivery claimed and then not fired is released: the sender's retry is
// claimed again (on another replica's handle too); another delivery stays.
TEST_P(TriggerStoreSuite, AReleasedDeliveryCanBeClaimedAgain) {
  ASSERT_TRUE(store_->ClaimDelivery("hook_1", "sig_a", kSlotT0, 10 * kSlotMinute).value());
  ASSERT_TRUE(store_->ClaimDelivery("hook_1", "sig_b", kSlotT0, 10 * kSlotMinute).value());
  ASSERT_TRUE(store_->ReleaseDelivery("hook_1", "sig_a").ok());
  EXPECT_TRUE(Open(key_)->ClaimDelivery("hook_1", "sig_a", kSlotT0 + 1, 10 * kSlotMinute).value());
  EXPECT_FALSE(store_->ClaimDelivery("hook_1", "sig_b", kSlotT0 + 1, 10 * kSlotMinute).value());
  EXPECT_TRUE(store_->ReleaseDelivery("hook_1", "sig_unknown").ok());
}

// Two replicas (two store handles, two schedulers) tick at the same moments
// over many slots: every slot fires exactly once in total.
TEST_P(TriggerStoreSuite, TwoReplicasNeverDoubleFireASlot) {
  ASSERT_TRUE(store_
                  ->ReplaceTriggers("user-1", "wf",
                                    {CronTrigger("trg_a", "* * * * *", kSlotT0),
                                     CronTrigger("trg_b", "*/2 * * * *", kSlotT0)})
                  .ok());
  absl::Mutex mu;
  std::map<std::pair<std::string, int64_t>, int> fires;  // (trigger, slot) -> count
  auto record = [&](const TriggerRecord& t, int64_t slot) {
    absl::MutexLock lock(&mu);
    ++fires[{t.trigger_id, slot}];
  };
  std::unique_ptr<TriggerStore> other = Open(key_);
  TriggerScheduler one(store_.get(), record, [] { return int64_t{0}; });
  TriggerScheduler two(other.get(), record, [] { return int64_t{0}; });
  constexpr int kSlots = 30;
  std::atomic<int> failures{0};
  auto run = [&](TriggerScheduler* scheduler) {
    for (int i = 0; i < kSlots; ++i) {
      // Several ticks per slot, as the real loop makes.
      for (int tick = 0; tick < 3; ++tick) {
        if (!scheduler->TickOnce(kSlotT0 + i * kSlotMinute + tick * 1000).ok()) ++failures;
      }
    }
  };
  std::thread a(run, &one);
  std::thread b(run, &two);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  int a_slots = 0;
  int b_slots = 0;
  for (const auto& [key, count] : fires) {
    EXPECT_EQ(count, 1) << key.first << " slot " << key.second;
    (key.first == "trg_a" ? a_slots : b_slots)++;
  }
  // Each replica may lag behind the other, which can only skip a slot
  // (coalescing), never fire one twice; in lockstep ticks none is skipped
  // by both, so every slot fired.
  EXPECT_EQ(a_slots, kSlots);
  EXPECT_EQ(b_slots, kSlots / 2);
}

// Policy: slots missed while no aevatar ran fire once, coalesced into the
// latest; slots before the trigger existed never fire.
TEST_P(TriggerStoreSuite, MissedSlotsFireOnceOnStart) {
  ASSERT_TRUE(
      store_->ReplaceTriggers("user-1", "wf", {CronTrigger("trg_a", "* * * * *", kSlotT0 + 30'000)})
          .ok());
  std::vector<int64_t> fired;
  TriggerScheduler scheduler(
      store_.get(), [&](const TriggerRecord&, int64_t slot) { fired.push_back(slot); },
      [] { return int64_t{0}; });
  EXPECT_EQ(scheduler.TickOnce(kSlotT0 + 40'000).value(), 0);  // only slot kSlotT0: before creation
  EXPECT_EQ(scheduler.TickOnce(kSlotT0 + kSlotMinute).value(), 1);
  // Down for an hour; the first tick after start fires the latest slot once.
  EXPECT_EQ(scheduler.TickOnce(kSlotT0 + 61 * kSlotMinute + 5'000).value(), 1);
  EXPECT_EQ(scheduler.TickOnce(kSlotT0 + 61 * kSlotMinute + 6'000).value(), 0);
  EXPECT_EQ(fired, (std::vector<int64_t>{kSlotT0 + kSlotMinute, kSlotT0 + 61 * kSlotMinute}));
}

}  // namespace
}  // namespace aevatar::orchestrator
