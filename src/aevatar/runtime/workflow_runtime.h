#ifndef AEVATAR_AEVATAR_RUNTIME_WORKFLOW_RUNTIME_H_
#define AEVATAR_AEVATAR_RUNTIME_WORKFLOW_RUNTIME_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/admission/ingress_auth.h"
#include "aevatar/admission/route_admission.h"
#include "aevatar/approvals/approval_store.h"
#include "aevatar/audit/audit_log.h"
#include "aevatar/clients/executions_transport.h"
#include "aevatar/codex/codex_exec_args.h"
#include "aevatar/codex/managed_errors.h"
#include "aevatar/runtime/definition_cache.h"
#include "aevatar/runtime/workflow_store.h"
#include "aevatar/vault/vault_keyring.h"
#include "aevatar/workflow/workflow_definition.h"
#include "aevatar/workflow/workflow_template.h"

namespace aevatar::orchestrator {

// Workflow runs as durable actors.
//
// Theory of operation. A run is an actor whose state lives in the
// WorkflowStore. It acts only in turns: a turn is triggered by its one durable
// self-callback (a row with a due time), runs under the run's lock (one
// message at a time), loads the state, makes at most one bounded provider
// exchange, and commits the new state, its events and the next callback in
// one transaction. Anything a later side effect depends on (the operation's
// sealed material, the receipt, the ETag, the next callback id) is committed
// before that side effect. Nothing sleeps inside a turn: waiting is a later
// callback. A dispatcher thread delivers due callbacks to a small worker
// pool; after a restart it simply finds the callbacks that are due, so runs
// resume from their persisted state.
//
// Replicas. Several processes may share one store (PostgreSQL). The
// dispatcher claims due callbacks with a lease on their run
// (WorkflowStore::ClaimDueCallbacks), renews the leases of its turns in
// flight, and releases a run's lease when its turn ends. A replica that dies
// mid-turn committed nothing of that turn: its callback stays due, and once
// its lease expires another replica claims the run and replays the turn from
// the committed state; the exchange it repeats carries the idempotency key
// committed before the first attempt. Version-checked commits fence a
// replica that lost its lease.
//
// Phases of a run: running -> (finalizing_audit <-> running)* -> succeeded |
// failed | stopped. Every terminal tool outcome is first frozen as an audit
// intent and replayed until the append-only audit log has it
// (finalizing_audit); only then does the run move on.
//
// Secrets (source code, the operation's idempotency key, the executor request,
// the caller's credential) are sealed in the store's vault and referenced by
// id and digest; they never enter state, events, logs or API responses.
class WorkflowRuntime {
 public:
  using Clock = std::function<int64_t()>;  // Unix ms
  using TransportFactory = std::function<std::unique_ptr<ExecutionsTransport>(
      const AdmittedRoute& route, const std::string& credential)>;
  // A source-readable NyxID read of the caller's facts with `credential`
  // (ReadNyxidFacts over HTTP in the service). Errors: Unauthenticated for a
  // NyxID 401, PermissionDenied for a 403, InvalidArgument for a reply that
  // does not parse, anything else (Unavailable) for transport trouble or 5xx.
  using FactsReader = std::function<absl::StatusOr<NyxidFacts>(const std::string& credential)>;
  // One managed codex_exec run for the run's owner (ManagedCodex::Execute in
  // the service), its exchange capped by `budget` (the step's remaining
  // timeout_ms), for a run started with an Agent Key restricted to
  // `caller_services` (empty otherwise): the runner's terminal result or one
  // typed error (AGENT_KEY_SERVICE_NOT_ALLOWED or a managed_* code).
  using CodexExecutor = std::function<absl::StatusOr<ManagedCodexResult>(
      const std::string& user_id, const CodexExecArgs& args, const std::string& idempotency_key,
      const std::string& diagnostic_id, std::chrono::milliseconds budget,
      const std::vector<std::string>& caller_services)>;

  // A stop of a running managed codex_exec step: has chrono-sandbox kill the
  // run started with `idempotency_key` (ManagedCodex::CancelRun in the
  // service). OK once the cancel is accepted; otherwise a typed error (the
  // stop then waits for the run's own end, as without it).
  using CodexCanceller = std::function<absl::Status(
      const std::string& user_id, const std::string& idempotency_key,
      const std::string& diagnostic_id, const std::vector<std::string>& caller_services)>;

  // What RequestStop hands the canceller for a running managed step.
  struct CodexStepCancel {
    std::string idempotency_key;  // the step's sealed key: never logged
    std::vector<std::string> caller_services;
  };

  // One approved private_ssh codex_exec call with the run's sealed
  // credential (RunPrivateSsh in the service): NyxID's raw SSH response or
  // one typed error; its exchange capped by `budget`.
  using PrivateSshExecutor = std::function<absl::StatusOr<nlohmann::json>(
      const std::string& credential, const CodexExecArgs& args, std::chrono::milliseconds budget)>;

  // The owner's Vault-backed Agent Key (the credential vault of
  // aevatar/codex/credential_vault.h) for an unattended run, read at each
  // outbound call. FailedPrecondition kAgentKeyMissingCode when the vault
  // holds none for `owner`.
  using AgentKeyResolver = std::function<absl::StatusOr<std::string>(const std::string& owner)>;

  struct Options {
    int workers = 4;
    // The absolute stop-cancellation window (spec: two minutes).
    int64_t stop_window_ms = 120'000;
    // How often the dispatcher looks for due callbacks.
    int64_t poll_interval_ms = 50;
    // This process among the replicas sharing the store (unique to it; a
    // random id by default), and how long its lease of a run lasts without
    // renewal: the time after which another replica takes over the run of
    // one that died. Leases are renewed every lease_ms / 3 while a turn
    // runs; Start() frees the leases an earlier process with this id held.
    std::string replica_id;
    int64_t lease_ms = 15'000;
    // Seals protected material (shared with the key rotation); required.
    std::shared_ptr<const VaultKeyring> vault;
    // codex_exec steps; empty when managed Codex is off (such a step then
    // fails managed_target_disabled before any network call).
    CodexExecutor codex;
    // Stops of running codex_exec steps; empty: a stop waits for the run.
    CodexCanceller codex_cancel;
    // private_ssh codex_exec steps: the owner's durable approvals and the
    // call; either empty: such a step fails target_not_configured.
    ApprovalStore* approvals = nullptr;
    PrivateSshExecutor private_ssh;
    // Told once per run this replica finishes (after the commit): the
    // terminal phase (succeeded | failed | stopped) and the run's seconds
    // from creation; empty: nobody listens (the service feeds /metrics).
    std::function<void(const std::string& phase, double seconds)> on_run_finished;
    // Unattended (trigger) runs; empty: StartVaultKeyRun refuses.
    AgentKeyResolver agent_keys;
  };

  // `facts` may be empty: no runtime re-read (HumanBearer runs then behave
  // as if NyxID were unreachable: they continue on the sealed id).
  WorkflowRuntime(Options options, WorkflowStore* store, AuditLog* audit,
                  TransportFactory transports, FactsReader facts, Clock clock);
  ~WorkflowRuntime();

  void Start();
  void Stop();

  // Creates a run of `definition` for `caller` on the route sealed by
  // `proof`, owning `authorization_catalog` (built from NyxID facts, see
  // authorization_catalog.h), and schedules its first turn. Returns the run
  // id. The catalog must grant the sealed route: FailedPrecondition with the
  // revocation's category as code (CODE_EXECUTION_ROUTE_INACTIVE, …) or
  // CODE_EXECUTION_ADMISSION_PROOF_INVALID otherwise.
  absl::StatusOr<std::string> StartRun(const Caller& caller, const WorkflowDefinition& definition,
                                       const nlohmann::json& inputs, const nlohmann::json& proof,
                                       const nlohmann::json& authorization_catalog);

  // Creates an unattended run of `owner`'s saved `definition` (a schedule or
  // webhook fired `trigger`, a small JSON object kept in the run's state).
  // The run's credential is the owner's Vault-backed Agent Key, kind
  // AgentKey, restricted to `allowed_services`: nothing is sealed into the
  // run; each outbound call resolves the key from the vault again
  // (Options::agent_keys), and runtime never reads inventory with it, so
  // only the route `proof` seals is called (an exact v6 proof; the caller
  // checked StartRuleForSavedPlan). Same errors as StartRun.
  absl::StatusOr<std::string> StartVaultKeyRun(const std::string& owner,
                                               const std::vector<std::string>& allowed_services,
                                               const WorkflowDefinition& definition,
                                               const nlohmann::json& inputs,
                                               const nlohmann::json& proof,
                                               const nlohmann::json& authorization_catalog,
                                               const nlohmann::json& trigger);

  // Records an unattended start that could not begin (no Agent Key in the
  // vault, no exact proof, …) as a run of `workflow_id` already failed with
  // `outcome_code` and `diagnostic_id`, so its owner finds it among the
  // runs. Returns the run id.
  absl::StatusOr<std::string> RecordFailedStart(const std::string& owner,
                                                const std::string& workflow_id,
                                                const std::string& outcome_code,
                                                const std::string& diagnostic_id,
                                                const nlohmann::json& trigger);

  // Applies NyxID facts just read for `owner` (by readiness, an admission or
  // any other source-readable read) to the authorization catalog of each of
  // the owner's live runs, as a message to each run actor: grants the facts
  // no longer support are revoked (run event "catalog.revoked"), so the
  // run's next step stops before any network call. Returns how many runs
  // changed.
  absl::StatusOr<int> ObserveNyxidFacts(const std::string& owner, const NyxidFacts& facts);

  // Requests stop cancellation. The first request persists an absolute
  // deadline (now + stop window); repeats reuse it. Returns the deadline.
  // When the run's managed codex_exec step is running, the first request
  // then (after the commit, without the run's lock) has chrono-sandbox kill
  // its Codex run (Options::codex_cancel): the step's exchange ends
  // "cancelled" at once and the stop's turn follows. The step's exchange
  // turn holds the run's turns meanwhile, so the stop's turn cannot do it.
  absl::StatusOr<int64_t> RequestStop(const std::string& run_id, const std::string& owner);

  // Runs every due turn now, on the calling thread (tests). Runs whose last
  // turn failed wait out their backoff, as under the dispatcher. A claim
  // runs one turn, so that a test can act between turns that follow at
  // once, unless `turns_per_claim` allows more (the workers use
  // kMaxTurnsPerDelivery).
  void DrainDueForTest(int turns_per_claim = 1);

  // Whether a message (a stop, NyxID facts) waits for the run's lock (tests).
  bool MessageWaitingForTest(const std::string& run_id) ABSL_LOCKS_EXCLUDED(mu_);
  // How many runs' locks are in hand (tests).
  size_t RunLocksForTest() ABSL_LOCKS_EXCLUDED(mu_);

  // Consecutive failed turns of one run before the run is failed typed.
  static constexpr int kMaxTurnAttempts = 8;
  // Turns of one run a worker runs back to back when each schedules the
  // next for now (Deliver).
  static constexpr int kMaxTurnsPerDelivery = 8;
  // The outcome of a run failed that way.
  static constexpr char kTurnFailedCode[] = "workflow_turn_failed";
  // An unattended run whose owner has no Agent Key in the vault.
  static constexpr char kAgentKeyMissingCode[] = "unattended_agent_key_missing";

 private:
  // A new run for `owner` whose state's caller is `caller_state`, with
  // `sealed` (ref -> sealed bytes) committed beside it.
  absl::StatusOr<std::string> CreateRun(const std::string& owner,
                                        const nlohmann::json& caller_state,
                                        const WorkflowDefinition& definition,
                                        const nlohmann::json& inputs, const nlohmann::json& proof,
                                        const nlohmann::json& authorization_catalog,
                                        std::vector<std::pair<std::string, std::string>> sealed);
  void DispatchLoop();
  // Claims the due callbacks this replica may run now (leasing their runs)
  // and queues those not in flight or backing off; renews the leases of the
  // runs in flight when a third of the lease has passed.
  void DispatchOnce(int64_t now);
  void RenewLeases(int64_t now) ABSL_LOCKS_EXCLUDED(mu_);
  // Runs the turn `first` triggers under the run's lock (taken after any
  // message waiting for it), then, while each turn schedules the next for
  // now and no message waits, up to `max_turns` in all. A
  // turn that fails (an error status or anything thrown) is logged with a
  // diagnostic id and its callback is retried after BackoffMs(attempt);
  // after kMaxTurnAttempts consecutive failures the run is failed typed
  // (kTurnFailedCode). Never throws.
  void Deliver(const Callback& first, int max_turns = kMaxTurnsPerDelivery);
  // How a delivery's turns ended: its last callback, the last turn's
  // status, whether a turn before it committed, and whether the last
  // commit gave the run's lease up.
  struct DeliveryEnd {
    Callback last;
    absl::Status status;
    bool progressed = false;
    bool lease_released = false;
  };
  // Deliver's end, still under the run's lock (workflow_dispatch.cc): the
  // run leaves the replica's hands (or goes on with a claim parked for it),
  // its lease is released or, after a failure, held through the retry's
  // backoff; a failure is logged, and the last one allowed fails the run.
  void EndDelivery(const DeliveryEnd& end) ABSL_LOCKS_EXCLUDED(mu_);
  // `committed`, the callback the last turn committed as the run's next,
  // when it is due at `now` (or follows at once, kAtOnceMs), no message
  // waits for the run, the runtime is not stopping and the delivery, started
  // at `delivery_started_ms`, has run for less than a third of the lease.
  std::optional<Callback> NextTurnDueNow(const std::string& run_id,
                                         const std::optional<Callback>& committed,
                                         int64_t delivery_started_ms, int64_t now)
      ABSL_LOCKS_EXCLUDED(mu_);
  // `run_lock` is the run's lock, held by the caller (a codex_exec exchange
  // releases it while it waits: codex_step_turns.cc); the turn runs at
  // `now_ms` on `loaded` (the run the turn before committed) or, without it,
  // the run as stored. `*committed` is set to what the turn committed
  // (nullopt when it committed nothing).
  absl::Status GuardedTurn(const Callback& callback, absl::Mutex* run_lock, int64_t now_ms,
                           std::optional<RunRecord> loaded,
                           std::optional<CommittedTurn>* committed);
  absl::Status FailRunTyped(const std::string& run_id, const std::string& diagnostic_id);
  // ObserveNyxidFacts for one run, under its lock: whether it revoked a grant.
  absl::StatusOr<bool> ObserveFactsLocked(const std::string& run_id, const NyxidFacts& facts);
  // RequestStop's one attempt, under the run's lock; sets *codex when the
  // first stop found a running managed codex_exec step to cancel.
  absl::StatusOr<int64_t> RequestStopLocked(const std::string& run_id, const std::string& owner,
                                            std::optional<CodexStepCancel>* codex);
  // The lock of one run actor (one turn or message at a time per run), for
  // as long as this reference lives. run_locks_ keeps a run's entry only
  // while a reference to it exists, so it holds the runs in hand, not every
  // run the replica ever served. Take the lock after making the reference.
  class RunLockRef {
   public:
    RunLockRef(WorkflowRuntime& runtime, const std::string& run_id);
    ~RunLockRef();
    RunLockRef(const RunLockRef&) = delete;
    RunLockRef& operator=(const RunLockRef&) = delete;
    absl::Mutex* get() const { return lock_; }

   private:
    WorkflowRuntime& runtime_;
    const std::string run_id_;
    absl::Mutex* lock_;
  };
  struct RunLockSlot {
    absl::Mutex lock;
    int refs = 0;  // RunLockRefs alive
  };
  // Returns once every message that waited for `run_id`'s lock when it was
  // called has taken it, so the turn that follows takes it after them.
  void LetWaitingMessagesGoFirst(const std::string& run_id) ABSL_LOCKS_EXCLUDED(mu_);
  // A message to the run actor (a stop, NyxID facts): `locked` runs under
  // the run's lock, after the messages already waiting and before the run's
  // next delivery, and again after a pause while a turn on another replica
  // commits in between (Aborted). Defined in workflow_runtime.cc, its only user.
  template <typename T>
  absl::StatusOr<T> DeliverMessage(const std::string& run_id,
                                   const std::function<absl::StatusOr<T>()>& locked)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A message about to wait for `run_id`'s lock: its ticket in
  // messages_waiting_, handed back by MessageHoldsLock once it holds it.
  int64_t MessageArrives(const std::string& run_id) ABSL_LOCKS_EXCLUDED(mu_);
  void MessageHoldsLock(const std::string& run_id, int64_t ticket) ABSL_LOCKS_EXCLUDED(mu_);
  // Wakes the dispatcher now (a run was created or stopped).
  void Poke() ABSL_LOCKS_EXCLUDED(mu_);
  bool WorkerShouldWake() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool DispatcherShouldWake() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Options options_;
  WorkflowStore* store_;
  AuditLog* audit_;
  TransportFactory transports_;
  FactsReader facts_;
  Clock clock_;
  DefinitionCache definitions_;

  // Guards the dispatcher's and workers' shared state. Lock order: a run's
  // lock, then mu_ (never the other way round).
  absl::Mutex mu_;
  // Stop: workers finish their turns and leave; the dispatcher claims no
  // more but keeps renewing the leases of those turns until they are done.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool dispatcher_done_ ABSL_GUARDED_BY(mu_) = false;
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  // Claimed runs, queued or being delivered: at most options_.workers, so
  // that a busy replica leaves new runs to idle ones.
  std::set<std::string> in_flight_ ABSL_GUARDED_BY(mu_);
  std::deque<Callback> ready_ ABSL_GUARDED_BY(mu_);  // oldest claim first
  // Claimed while their run's delivery was still ending, by run.
  std::map<std::string, Callback> parked_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, RunLockSlot> run_locks_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> turn_failures_ ABSL_GUARDED_BY(mu_);  // run -> consecutive
  // Messages (a stop, NyxID facts) waiting for a run's lock, by run, as
  // tickets in arrival order: while one waits, a delivery runs no further
  // turn that follows at once and a new delivery lets it go first, so a
  // message waits for about one turn.
  std::map<std::string, std::set<int64_t>> messages_waiting_ ABSL_GUARDED_BY(mu_);
  int64_t message_tickets_ ABSL_GUARDED_BY(mu_) = 0;  // the last ticket given
  int64_t leases_renewed_at_ms_ = 0;                  // the dispatcher thread's own
  std::vector<std::thread> threads_;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_WORKFLOW_RUNTIME_H_
