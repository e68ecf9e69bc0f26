#ifndef AEVATAR_TESTS_CHRONO_CODEX_CODEX_STACK_H_
#define AEVATAR_TESTS_CHRONO_CODEX_CODEX_STACK_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "chrono_client.h"
#include "doubles/responses_double.h"
#include "http/client.h"
#include "http/server.h"
#include "nlohmann/json.hpp"

namespace aevatar::testing {

// What the NyxID double saw of one proxied model call.
struct ProxiedCall {
  std::string via;            // the _nyxid_via query value
  std::string authorization;  // the Authorization header chrono's relay sent
};

// A double of NyxID's proxy for the chrono-llm-public route, for the codex
// runner's tests (the real NyxID is the lead's full-stack tests'): it
// answers POST /api/v1/proxy/chrono-llm-public/responses by forwarding the
// body to the model double with the provider key, and records what came in.
class FakeNyxidProxy {
 public:
  FakeNyxidProxy(uint16_t model_port, std::string provider_key);
  ~FakeNyxidProxy();
  std::string base_url() const;
  std::vector<ProxiedCall> calls() const;

 private:
  http::Response Handle(http::Request& request);

  const uint16_t model_port_;
  const std::string provider_key_;
  mutable absl::Mutex mu_;
  std::vector<ProxiedCall> calls_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<http::Server> server_;
};

// The whole stack a managed Codex run needs: the model double (with a
// provider key and a request record), the NyxID double and a real
// `chrono-sandbox serve` with the runner configured for `backend`.
class CodexStack {
 public:
  static constexpr char kRoute[] = "us_llm_route_1";
  static constexpr char kModel[] = "test-model";
  static constexpr char kProviderKey[] = "provider-key-PLANTED-7d1e";

  explicit CodexStack(const std::string& backend, std::vector<std::string> extra_args = {});

  bool ok() const { return chrono_ && chrono_->ok(); }
  ChronoFixture& chrono() { return *chrono_; }
  FakeNyxidProxy& nyxid() { return *nyxid_; }
  uint16_t model_port() const { return model_->port(); }
  // The model double's record: one JSON object per request it answered.
  std::vector<nlohmann::json> ModelRecord() const;

  // POST /codex/execute as `subject` with a fresh delegation token (the
  // token is returned in *token_out when given).
  http::ClientResponse Execute(const nlohmann::json& body,
                               std::vector<std::pair<std::string, std::string>> headers = {},
                               std::string* token_out = nullptr,
                               const std::string& subject = "alice");
  // POST /codex/runs/{run_id}/cancel as `subject`.
  http::ClientResponse Cancel(const std::string& run_id, const std::string& subject = "alice");
  // A request body with `prompt`, the route and `timeout_secs`.
  static nlohmann::json Body(const std::string& prompt, int timeout_secs = 120);

 private:
  http::ClientResponse Post(const std::string& path, const nlohmann::json& body,
                            std::vector<std::pair<std::string, std::string>> headers,
                            std::string* token_out, const std::string& subject);

  TempDir dir_;
  std::unique_ptr<doubles::ResponsesDouble> model_;
  std::unique_ptr<FakeNyxidProxy> nyxid_;
  std::unique_ptr<ChronoFixture> chrono_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_CHRONO_CODEX_CODEX_STACK_H_
