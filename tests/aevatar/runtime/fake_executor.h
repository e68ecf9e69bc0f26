#ifndef AEVATAR_TESTS_AEVATAR_FAKE_EXECUTOR_H_
#define AEVATAR_TESTS_AEVATAR_FAKE_EXECUTOR_H_

// TEST DOUBLE of chrono-sandbox's /executions API as seen through the NyxID
// proxy, for in-process workflow runtime tests. It keeps operations in
// memory, follows the executor's contract (202 receipt with ETag, status with
// ETag/304, result 409 until terminal, cancel returning the status document)
// and records every exchange. The real executor is exercised by the
// integration tests; this double only lets the runtime be driven turn by turn
// under a controlled clock.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/clients/executions_transport.h"

namespace aevatar::orchestrator::testing {

struct Exchange {
  std::string kind;  // submit, status, result, cancel
  std::string key;   // submit: the idempotency key
  std::string if_none_match;
  int64_t deadline_unix_ms = 0;
  int64_t at_ms = 0;              // the test clock when the exchange started (0 without a clock)
  nlohmann::json body = nullptr;  // submit: the request body sent to the executor
};

class FakeExecutor {
 public:
  // Each operation reports `running` for this many status reads, then succeeds.
  int polls_before_done = 2;
  // When true, cancel leaves the operation running (a cancel that does not land).
  bool ignore_cancel = false;
  std::string stdout_text = "done\n";
  // The clock each exchange is stamped with (Exchange::at_ms); unset: 0.
  const std::atomic<int64_t>* clock = nullptr;
  // Called as each result fetch begins, on the runtime's thread; unset: nothing.
  std::function<void()> before_result;

  std::unique_ptr<ExecutionsTransport> Transport();
  std::vector<Exchange> exchanges() const;
  int CountOf(const std::string& kind) const;

 private:
  friend class FakeTransport;
  struct Op {
    std::string id;
    std::string status = "queued";
    int polls = 0;
    int version = 1;
  };
  NyxidReply Submit(const std::string& key, const nlohmann::json& body);
  NyxidReply Status(const std::string& id, const std::string& if_none_match);
  NyxidReply Result(const std::string& id);
  NyxidReply Cancel(const std::string& id, int64_t deadline);
  NyxidReply StatusDoc(Op& op);
  void Record(Exchange exchange) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, Op> by_key_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> key_of_id_ ABSL_GUARDED_BY(mu_);
  std::vector<Exchange> exchanges_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::orchestrator::testing

#endif  // AEVATAR_TESTS_AEVATAR_FAKE_EXECUTOR_H_
