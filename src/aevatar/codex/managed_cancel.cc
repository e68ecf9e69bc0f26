#include "aevatar/codex/managed_cancel.h"

#include <chrono>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

// How long cancel requests are retried while chrono answers 404 or cannot be
// reached (a run not started yet, a NyxID blip); the exchange's own deadline
// still bounds the wait after that.
constexpr auto kCancelRetryWindow = std::chrono::seconds(60);
constexpr absl::Duration kCancelRetryGap = absl::Milliseconds(250);

}  // namespace

std::string ManagedRunId(const std::string& idempotency_key) {
  return "run_" + base::Sha256Hex("aevatar-managed-run:" + idempotency_key).substr(0, 40);
}

NyxidReply SendCancelUntilSettled(const std::function<NyxidReply()>& send_cancel,
                                  std::chrono::steady_clock::duration window,
                                  const absl::Notification* done) {
  NyxidReply answer;
  const auto until = std::chrono::steady_clock::now() + window;
  while ((done == nullptr || !done->HasBeenNotified()) &&
         std::chrono::steady_clock::now() < until) {
    answer = send_cancel();
    if (answer.status == 202) break;
    // 404 (not started yet), a 5xx or a transport failure: again soon. Any
    // other answer (401, 403) will not change.
    if (answer.status != 404 && answer.status != 0 && answer.status < 500) break;
    if (done != nullptr) {
      done->WaitForNotificationWithTimeout(kCancelRetryGap);
    } else {
      absl::SleepFor(kCancelRetryGap);
    }
  }
  return answer;
}

CancellableReply RunCancellable(const std::function<NyxidReply()>& exchange,
                                const std::function<NyxidReply()>& send_cancel,
                                const absl::Notification* cancel) {
  CancellableReply out;
  if (cancel == nullptr) {
    out.reply = exchange();
    return out;
  }
  absl::Notification done;
  std::thread runner([&] {
    out.reply = exchange();
    done.Notify();
  });
  // Either the exchange ends or the caller cancels; polled together.
  while (!done.HasBeenNotified() && !cancel->HasBeenNotified()) {
    done.WaitForNotificationWithTimeout(absl::Milliseconds(100));
  }
  if (!done.HasBeenNotified()) {
    out.cancel_asked = true;
    out.cancel_status = SendCancelUntilSettled(send_cancel, kCancelRetryWindow, &done).status;
  }
  runner.join();
  return out;
}

}  // namespace aevatar::orchestrator
