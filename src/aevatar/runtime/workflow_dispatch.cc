// The runtime's threads: the dispatcher that claims due callbacks with a
// lease on their runs (and renews the leases of the turns in flight), the
// workers that deliver them, what the end of a delivery gives back (its
// run, its lease), and the test hook that claims and delivers on the
// caller's thread. The turns themselves are in workflow_runtime.cc.
#include "aevatar/runtime/run_turns.h"
#include "aevatar/runtime/workflow_runtime.h"
#include "base/api_error.h"
#include "base/log.h"
#include "http/problem.h"

namespace aevatar::orchestrator {

void WorkflowRuntime::Start() {
  // An earlier process with this replica id (a restart) left its leases.
  if (auto freed = store_->ReleaseLeasesOf(options_.replica_id); !freed.ok()) {
    base::Log(base::LogLevel::kWarn, "workflow.lease_release_failed", "",
              {{"code", base::ApiCode(freed.status())}});
  }
  threads_.emplace_back([this] { DispatchLoop(); });
  for (int i = 0; i < options_.workers; ++i) {
    threads_.emplace_back([this] {
      for (;;) {
        Callback callback;
        {
          absl::MutexLock lock(&mu_);
          mu_.Await(absl::Condition(this, &WorkflowRuntime::WorkerShouldWake));
          if (stopping_) return;
          callback = ready_.front();
          ready_.pop_front();
        }
        Deliver(callback);
      }
    });
  }
}

void WorkflowRuntime::Stop() {
  if (threads_.empty()) return;
  // Claimed but never delivered: free for the next replica (or start) at once.
  std::deque<Callback> undelivered;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;  // wakes every worker (their condition holds)
    undelivered.swap(ready_);
    for (const Callback& callback : undelivered) {
      in_flight_.erase(callback.run_id);
      parked_.erase(callback.run_id);  // the one release below covers it
    }
  }
  for (const Callback& callback : undelivered) {
    (void)store_->ReleaseRunLease(callback.run_id, options_.replica_id);
  }
  // The workers finish the turns they are in while the dispatcher (thread 0)
  // still renews those turns' leases; then the dispatcher goes.
  for (size_t i = 1; i < threads_.size(); ++i) threads_[i].join();
  {
    absl::MutexLock lock(&mu_);
    dispatcher_done_ = true;
  }
  threads_[0].join();
  threads_.clear();
}

WorkflowRuntime::RunLockRef::RunLockRef(WorkflowRuntime& runtime, const std::string& run_id)
    : runtime_(runtime), run_id_(run_id) {
  absl::MutexLock lock(&runtime_.mu_);
  RunLockSlot& slot = runtime_.run_locks_[run_id_];  // a map node: its address stays
  ++slot.refs;
  lock_ = &slot.lock;
}

WorkflowRuntime::RunLockRef::~RunLockRef() {
  absl::MutexLock lock(&runtime_.mu_);
  auto it = runtime_.run_locks_.find(run_id_);
  // Every holder of the mutex holds a reference: at none, nobody can have it.
  if (it != runtime_.run_locks_.end() && --it->second.refs == 0) runtime_.run_locks_.erase(it);
}

size_t WorkflowRuntime::RunLocksForTest() {
  absl::MutexLock lock(&mu_);
  return run_locks_.size();
}

void WorkflowRuntime::LetWaitingMessagesGoFirst(const std::string& run_id) {
  // Only the messages already waiting: later ones cannot hold the turn off.
  struct Query {
    const std::map<std::string, std::set<int64_t>>* waiting;
    const std::string* run_id;
    int64_t last_ticket;
  };
  absl::MutexLock lock(&mu_);
  Query query{&messages_waiting_, &run_id, message_tickets_};
  mu_.Await(absl::Condition(
      +[](Query* q) {
        auto it = q->waiting->find(*q->run_id);
        return it == q->waiting->end() || *it->second.begin() > q->last_ticket;
      },
      &query));
}

int64_t WorkflowRuntime::MessageArrives(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  const int64_t ticket = ++message_tickets_;
  messages_waiting_[run_id].insert(ticket);
  return ticket;
}

void WorkflowRuntime::MessageHoldsLock(const std::string& run_id, int64_t ticket) {
  absl::MutexLock lock(&mu_);
  auto it = messages_waiting_.find(run_id);
  if (it == messages_waiting_.end()) return;
  it->second.erase(ticket);
  if (it->second.empty()) messages_waiting_.erase(it);
}

bool WorkflowRuntime::MessageWaitingForTest(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  return messages_waiting_.contains(run_id);
}

bool WorkflowRuntime::WorkerShouldWake() const { return stopping_ || !ready_.empty(); }
bool WorkflowRuntime::DispatcherShouldWake() const { return dispatcher_done_ || poked_; }

void WorkflowRuntime::Poke() {
  absl::MutexLock lock(&mu_);
  poked_ = true;
}

void WorkflowRuntime::DispatchLoop() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(this, &WorkflowRuntime::DispatcherShouldWake),
                           absl::Milliseconds(options_.poll_interval_ms));
      if (dispatcher_done_) return;
      poked_ = false;
    }
    DispatchOnce(clock_());
  }
}

void WorkflowRuntime::DispatchOnce(int64_t now) {
  if (now - leases_renewed_at_ms_ >= options_.lease_ms / 3) {
    RenewLeases(now);
    leases_renewed_at_ms_ = now;
  }
  int capacity = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) capacity = options_.workers - static_cast<int>(in_flight_.size());
  }
  if (capacity <= 0) return;  // a worker's Poke() brings the dispatcher back when one is free
  auto due = store_->ClaimDueCallbacks(options_.replica_id, now, options_.lease_ms, capacity);
  if (!due.ok()) {
    base::Log(base::LogLevel::kError, "workflow.dispatch_failed", "",
              {{"code", base::ApiCode(due.status())}});
    return;
  }
  std::vector<std::string> unwanted;
  {
    absl::MutexLock lock(&mu_);  // workers wake when ready_ fills (their condition)
    for (const Callback& callback : *due) {
      if (in_flight_.count(callback.run_id)) {
        // Its delivery's last commit gave the lease up an instant ago (or
        // the lease expired mid-turn); the delivery decides, as it ends,
        // whether this callback is next (Deliver).
        parked_.insert_or_assign(callback.run_id, callback);
        continue;
      }
      if (stopping_) {
        // Stop() began while this claim ran: no worker will deliver it.
        unwanted.push_back(callback.run_id);
        continue;
      }
      in_flight_.insert(callback.run_id);
      ready_.push_back(callback);
    }
  }
  for (const std::string& run_id : unwanted) {
    (void)store_->ReleaseRunLease(run_id, options_.replica_id);
  }
}

void WorkflowRuntime::EndDelivery(const DeliveryEnd& end) {
  const std::string& run_id = end.last.run_id;
  int attempts = 0;
  bool release_claim = false;  // a claim parked for the run, not handed on
  {
    // Before a lease changes here, the run leaves in_flight_: a dispatcher
    // that claims it after a release finds it free. A claim that came after
    // the last commit gave the lease up was parked (DispatchOnce): the run
    // stays in flight with that callback next.
    absl::MutexLock state_lock(&mu_);
    auto parked = parked_.extract(run_id);
    if (!parked.empty() && end.lease_released && !stopping_) {
      ready_.push_back(std::move(parked.mapped()));
    } else {
      in_flight_.erase(run_id);
      release_claim = !parked.empty();
    }
    poked_ = true;  // a worker is free: the dispatcher may claim again now
    // A failure after turns that committed is the first of its kind.
    if (end.status.ok() || end.progressed) turn_failures_.erase(run_id);
    attempts = end.status.ok() ? 0 : ++turn_failures_[run_id];
  }
  if (end.status.ok()) {
    // Any replica may run the next callback at once; a failure to release
    // only delays that until the lease expires.
    if (!end.lease_released || release_claim) {
      (void)store_->ReleaseRunLease(run_id, options_.replica_id);
    }
    return;
  }
  // The callback stays due; the lease is held through the retry's bounded
  // backoff, so no replica claims the run before then, and a run backing
  // off never takes a claim slot from runs that are due.
  (void)store_->RenewRunLease(run_id, options_.replica_id, clock_(), BackoffMs(attempts));
  const std::string diagnostic_id = http::NewDiagnosticId();
  // The status code only: a message might quote what the turn was reading.
  base::Log(base::LogLevel::kWarn, "workflow.turn_failed", run_id,
            {{"diagnostic_id", diagnostic_id},
             {"code", base::ApiCode(end.status)},
             {"attempt", attempts},
             {"max_attempts", kMaxTurnAttempts}});
  if (attempts < kMaxTurnAttempts) return;
  if (absl::Status failed = FailRunTyped(run_id, diagnostic_id); failed.ok()) {
    absl::MutexLock state_lock(&mu_);
    turn_failures_.erase(run_id);
  }
}

void WorkflowRuntime::RenewLeases(int64_t now) {
  std::vector<std::string> runs;
  {
    absl::MutexLock lock(&mu_);
    runs.assign(in_flight_.begin(), in_flight_.end());
  }
  for (const std::string& run_id : runs) {
    auto renewed = store_->RenewRunLease(run_id, options_.replica_id, now, options_.lease_ms);
    // A lost lease is not fatal here: the turn's commit is fenced by the
    // run's version, so the replica that took over wins.
    if (!renewed.ok() || !*renewed) {
      base::Log(base::LogLevel::kWarn, "workflow.lease_lost", run_id,
                {{"code", renewed.ok() ? "lease_taken" : base::ApiCode(renewed.status())}});
    }
  }
}

void WorkflowRuntime::DrainDueForTest(int turns_per_claim) {
  for (int round = 0; round < 1000; ++round) {
    const int64_t now = clock_();
    auto due = store_->ClaimDueCallbacks(options_.replica_id, now, options_.lease_ms, 64);
    if (!due.ok()) return;
    // A run backing off from a failed turn is leased until its retry: the
    // claim skips it.
    if (due->empty()) return;
    for (const Callback& callback : *due) Deliver(callback, turns_per_claim);
  }
}

}  // namespace aevatar::orchestrator
