#ifndef AEVATAR_AEVATAR_TRIGGERS_TRIGGER_STORE_H_
#define AEVATAR_AEVATAR_TRIGGERS_TRIGGER_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/vault/vault_keyring.h"

// The triggers of saved workflows (docs/workflows.md, Triggers): which
// schedules and webhooks start a workflow unattended, the last schedule slot
// each one fired, and the webhook deliveries already seen.
namespace aevatar::orchestrator {

struct TriggerRecord {
  std::string trigger_id;  // "trg_…"
  std::string owner;
  std::string workflow_id;
  std::string kind;  // "cron" | "webhook"
  std::string cron;  // the expression, for "cron"
  // For "webhook": the public id in /api/hooks/{id} and its HMAC secret. The
  // secret is sealed at rest (bound to the hook id); in memory only here.
  std::string hook_id;
  std::string secret;
  int64_t created_at_ms = 0;
  // The last schedule slot claimed (unix ms), 0 when none.
  int64_t last_slot_ms = 0;
};

// Thread-safe; every write is committed before the call returns. Several
// processes (replicas) may share one store.
class TriggerStore {
 public:
  virtual ~TriggerStore() = default;

  // Makes `triggers` the triggers of (owner, workflow_id): records whose
  // trigger_id is new are inserted, those already stored are kept as they
  // are (their last slot too), and the workflow's other triggers are
  // removed, in one transaction. InvalidArgument for a record of another
  // workflow; AlreadyExists when a hook id is taken.
  virtual absl::Status ReplaceTriggers(const std::string& owner, const std::string& workflow_id,
                                       const std::vector<TriggerRecord>& triggers) = 0;

  // Given a workflow's stored triggers (webhooks with their secrets, oldest
  // first), the triggers it should have (ReplaceTriggers' rules).
  using TriggerPlan =
      std::function<std::vector<TriggerRecord>(const std::vector<TriggerRecord>& stored)>;

  // Reads the triggers of (owner, workflow_id), gives them to `plan` and
  // stores its answer as ReplaceTriggers does, in one transaction that no
  // other reconcile of the same workflow overlaps (other replicas too): two
  // concurrent saves apply one after the other, the later one planning from
  // the earlier one's result, so neither drops a webhook the other created.
  // `plan` runs once, inside the transaction: it must not call the store.
  // Returns what was stored; errors as ReplaceTriggers.
  virtual absl::StatusOr<std::vector<TriggerRecord>> ReconcileTriggers(
      const std::string& owner, const std::string& workflow_id, const TriggerPlan& plan) = 0;

  // The triggers of (owner, workflow_id), webhooks with their secrets.
  virtual absl::StatusOr<std::vector<TriggerRecord>> TriggersOf(const std::string& owner,
                                                                const std::string& workflow_id) = 0;

  // Every cron trigger (without secrets), for the scheduler.
  virtual absl::StatusOr<std::vector<TriggerRecord>> Schedules() = 0;

  // The webhook trigger `hook_id`, with its secret; nullopt when unknown.
  virtual absl::StatusOr<std::optional<TriggerRecord>> HookById(const std::string& hook_id) = 0;

  // Claims `slot_ms` of `trigger_id`, atomically across replicas: true when
  // the trigger's last slot was earlier (it becomes `slot_ms`), false when
  // this or a later slot was already claimed or the trigger is gone. One
  // claim per slot, ever: the scheduler fires only what it claimed.
  virtual absl::StatusOr<bool> ClaimSlot(const std::string& trigger_id, int64_t slot_ms) = 0;

  // Records that delivery `signature_digest` of `hook_id` arrived at
  // `now_ms`: true the first time, false for a replay. Deliveries older than
  // `keep_ms` are forgotten on the way (a replay of those is stale anyway).
  virtual absl::StatusOr<bool> ClaimDelivery(const std::string& hook_id,
                                             const std::string& signature_digest, int64_t now_ms,
                                             int64_t keep_ms) = 0;

  // Forgets delivery `signature_digest` of `hook_id` (claimed, then not
  // fired: the sender's retry must be accepted). OK when it was not there.
  virtual absl::Status ReleaseDelivery(const std::string& hook_id,
                                       const std::string& signature_digest) = 0;
};

// A store in the SQLite file at `path` (created 0600; ":memory:" for tests),
// sealing webhook secrets with `vault` (required).
absl::StatusOr<std::unique_ptr<TriggerStore>> OpenSqliteTriggerStore(
    const std::string& path, std::shared_ptr<const VaultKeyring> vault);

// The sealed form of a webhook secret, bound to its hook id (both stores).
std::string SealHookSecret(const VaultKeyring& vault, const std::string& hook_id,
                           const std::string& secret);
absl::StatusOr<std::string> OpenHookSecret(const VaultKeyring& vault, const std::string& hook_id,
                                           std::string_view sealed);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_TRIGGERS_TRIGGER_STORE_H_
