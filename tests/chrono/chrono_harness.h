#ifndef AEVATAR_TESTS_CHRONO_CHRONO_HARNESS_H_
#define AEVATAR_TESTS_CHRONO_CHRONO_HARNESS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chrono/caller_auth.h"
#include "chrono/credential_sealer.h"
#include "chrono/executor.h"
#include "chrono/http_api.h"
#include "chrono/metrics.h"
#include "chrono/operation_store.h"
#include "fake_runner.h"
#include "http/router.h"
#include "nlohmann/json.hpp"
#include "service_process.h"
#include "test_issuer.h"

namespace aevatar::chrono {

// The executor and its HTTP API in-process, as the service wires them, over a
// real SQLite store in a private directory, a FakeRunner instead of the
// sandbox and a FakeClock instead of the wall clock. Requests go straight to
// the router (no sockets), authenticated with a test issuer's tokens.
class ChronoHarness {
 public:
  static ExecutorOptions DefaultOptions();
  explicit ChronoHarness(ExecutorOptions options = DefaultOptions(),
                         int64_t retention_ms = 3600 * 1000);
  ~ChronoHarness() { Shutdown(); }

  // Creates and starts the executor over `store` (default: the harness's
  // SQLite store) and builds the API router on it.
  absl::Status Start(OperationStore* store = nullptr);

  // One request through the router as `subject`, with a valid delegation token.
  http::Response Call(const std::string& method, const std::string& path,
                      const std::string& body = "",
                      const std::vector<std::pair<std::string, std::string>>& headers = {},
                      const std::string& subject = "alice");
  // POST /executions of `body` under Idempotency-Key `key`.
  http::Response Submit(const nlohmann::json& body, const std::string& key,
                        const std::string& subject = "alice");

  // Opens the runner (so runs in progress end), then stops and destroys the
  // executor. Idempotent; requires that no other thread still uses the executor.
  void Shutdown();

  // The router itself (after Start), for requests the test builds whole.
  const http::Router& router() const { return *router_; }
  // The issuer whose JWKS the harness's auth trusts.
  const testing::TestIssuer& issuer() const { return issuer_; }
  OperationStore& store() { return *store_; }
  Executor& executor() { return *executor_; }
  FakeRunner& runner() { return runner_; }
  FakeClock& clock() { return clock_; }
  const CredentialSealer& sealer() const { return *sealer_; }
  Metrics& metrics() { return metrics_; }

 private:
  const ExecutorOptions options_;
  const int64_t retention_ms_;
  testing::TempDir dir_;
  testing::TestIssuer issuer_;
  FakeClock clock_;
  FakeRunner runner_;
  Metrics metrics_;
  std::unique_ptr<OperationStore> store_;
  std::unique_ptr<CredentialSealer> sealer_;
  std::unique_ptr<CallerAuth> auth_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<http::Router> router_;
};

// Five runs of 500 ms one after another on `h` (started, one worker): the pace;
// then one held running and 20 queued behind it, each a millisecond younger
// than the one before. Returns the queued ones, oldest first; the runner
// stays closed.
std::vector<Operation> QueueBehindAPaceOf500Ms(ChronoHarness& h);

// A fresh queued bash operation of "alice" under Idempotency-Key `key`, the
// way POST /executions builds one (canonical request, fingerprint, an hour's
// retention from now_ms).
Operation NewBashOperation(const std::string& id, const std::string& key, int64_t now_ms,
                           const std::string& script = "echo durable");

// Parses a response body as JSON (a discarded value when it is not JSON).
nlohmann::json BodyOf(const http::Response& response);

}  // namespace aevatar::chrono

#endif  // AEVATAR_TESTS_CHRONO_CHRONO_HARNESS_H_
