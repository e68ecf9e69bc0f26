#ifndef AEVATAR_AEVATAR_CODEX_MANAGED_CANCEL_H_
#define AEVATAR_AEVATAR_CODEX_MANAGED_CANCEL_H_

#include <chrono>
#include <functional>
#include <string>

#include "absl/synchronization/notification.h"
#include "aevatar/clients/nyxid_client.h"

// Cancelling a managed Codex run. chrono-sandbox's POST /codex/execute is one
// long exchange; the run it starts carries a run id (`run_id` in the body)
// and POST /codex/runs/{run_id}/cancel, by the same NyxID subject, kills the
// run's sandbox, after which the exchange answers status "cancelled".
namespace aevatar::orchestrator {

// The run id of the managed run sent with `idempotency_key`: a digest of it
// ("run_" + 40 hex), so a retry with the same key (a workflow step after an
// aevatar restart) names the same run and the raw key never leaves aevatar.
std::string ManagedRunId(const std::string& idempotency_key);

// Sends a run's cancel (`send_cancel`) until chrono accepts it (202) or
// answers what sending again cannot change (401, 403, …), retrying 404 (the
// run not registered yet), 5xx and transport failures every 250 ms for up
// to `window`, and sooner stopping when `done` (may be null: the exchange
// the run belongs to) is notified. Returns the last answer (status 0 when
// none was sent).
NyxidReply SendCancelUntilSettled(const std::function<NyxidReply()>& send_cancel,
                                  std::chrono::steady_clock::duration window,
                                  const absl::Notification* done);

// What RunCancellable saw.
struct CancellableReply {
  NyxidReply reply;           // the exchange's own answer
  bool cancel_asked = false;  // `cancel` was notified while it was going
  int cancel_status = 0;      // the last cancel request's HTTP status (0: none answered)
};

// Runs `exchange` on its own thread and waits for it. When `cancel` (may be
// null) is notified first, it calls `send_cancel` until chrono accepts it
// (202), the exchange ends, or a bounded while passes: a run registers only
// once chrono starts it, so an early cancel is 404 and is sent again. It
// then waits for the exchange, which ends soon after an accepted cancel.
CancellableReply RunCancellable(const std::function<NyxidReply()>& exchange,
                                const std::function<NyxidReply()>& send_cancel,
                                const absl::Notification* cancel);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CODEX_MANAGED_CANCEL_H_
