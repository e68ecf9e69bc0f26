#include "chrono_harness.h"

#include <cstdlib>

#include "base/clock.h"
#include "base/crypto.h"
#include "base/jws.h"
#include "chrono/execute_request.h"
#include "chrono/sqlite_operation_store.h"
#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::chrono {
namespace {

template <typename T>
T OrDie(absl::StatusOr<T> value, const char* what) {
  if (!value.ok()) {
    ADD_FAILURE() << what << ": " << value.status();
    std::abort();
  }
  return std::move(*value);
}

}  // namespace

Operation NewBashOperation(const std::string& id, const std::string& key, int64_t now_ms,
                           const std::string& script) {
  ExecuteRequest request;
  request.language = sandbox::Language::kBash;
  request.script = script;
  Operation op;
  op.id = id;
  op.owner = "alice";
  op.idempotency_key_hash = base::Sha256Hex(key);
  op.request = CanonicalRequestJson(request);
  op.fingerprint = base::Sha256Hex(op.request);
  op.created_at_ms = now_ms;
  op.expires_at_ms = now_ms + 3600 * 1000;
  return op;
}

std::vector<Operation> QueueBehindAPaceOf500Ms(ChronoHarness& h) {
  // Five runs of 500 ms by the injected clock, one after another.
  for (int i = 0; i < 5; ++i) {
    const std::string id = "op_pace_" + std::to_string(i);
    h.runner().Close();
    EXPECT_TRUE(h.executor().Submit(NewBashOperation(id, id, h.clock().Now())).ok());
    EXPECT_TRUE(h.runner().WaitStarted(i + 1));
    h.clock().Advance(500);
    h.runner().Open();
    EXPECT_TRUE(::aevatar::testing::PollUntil(
        [&] { return h.store().Get(id)->status == OperationStatus::kSucceeded; }));
  }
  h.runner().Close();
  EXPECT_TRUE(h.executor().Submit(NewBashOperation("op_held", "held", h.clock().Now())).ok());
  EXPECT_TRUE(h.runner().WaitStarted(6));
  std::vector<Operation> queued;
  for (int i = 0; i < 20; ++i) {
    h.clock().Advance(1);
    queued.push_back(
        NewBashOperation("op_q" + std::to_string(i), "q" + std::to_string(i), h.clock().Now()));
    EXPECT_TRUE(h.executor().Submit(queued.back()).ok());
  }
  return queued;
}

ExecutorOptions ChronoHarness::DefaultOptions() {
  ExecutorOptions options;
  options.workers = 1;
  options.queue_depth = 8;
  options.runner_id = "runner-test";
  return options;
}

ChronoHarness::ChronoHarness(ExecutorOptions options, int64_t retention_ms)
    : options_(std::move(options)), retention_ms_(retention_ms) {
  store_ = OrDie(OpenSqliteOperationStore(dir_.path() + "/operations.db"), "open the store");
  sealer_ = std::make_unique<CredentialSealer>(
      OrDie(CredentialSealer::LoadOrCreate(dir_.path()), "load the sealer"));
  auto jwks = OrDie(base::Jwks::Parse(issuer_.JwksJson()), "parse the JWKS");
  auth_ = std::make_unique<CallerAuth>(
      [jwks](std::string_view kid) -> absl::StatusOr<base::Jwk> {
        if (const base::Jwk* key = jwks.Find(kid)) return *key;
        return absl::NotFoundError("unknown kid");
      },
      "chrono-sandbox", base::NowUnixSecs);
}

void ChronoHarness::Shutdown() {
  runner_.Open();
  router_.reset();
  executor_.reset();
}

absl::Status ChronoHarness::Start(OperationStore* store) {
  if (store == nullptr) store = store_.get();
  executor_ = std::make_unique<Executor>(options_, &runner_, store, sealer_.get(), &metrics_,
                                         clock_.AsClock());
  if (absl::Status st = executor_->Start(); !st.ok()) return st;
  HttpApiOptions api_options;
  api_options.retention_ms = retention_ms_;
  router_ = BuildHttpApi(api_options, {auth_.get(), executor_.get(), store, sealer_.get(),
                                       &metrics_, /*engine_ready=*/true, clock_.AsClock()});
  return absl::OkStatus();
}

http::Response ChronoHarness::Call(const std::string& method, const std::string& path,
                                   const std::string& body,
                                   const std::vector<std::pair<std::string, std::string>>& headers,
                                   const std::string& subject) {
  http::Request request;
  request.method = method;
  request.target = path;
  const size_t query_at = path.find('?');
  request.path = path.substr(0, query_at);
  if (query_at != std::string::npos) request.query = path.substr(query_at + 1);
  request.body = body;
  request.remote_address = "127.0.0.1";
  request.headers.Set("X-NyxID-Delegation-Token", issuer_.Delegation(subject));
  if (!body.empty()) request.headers.Set("Content-Type", "application/json");
  for (const auto& [name, value] : headers) request.headers.Set(name, value);
  return router_->Handle(request);
}

http::Response ChronoHarness::Submit(const nlohmann::json& body, const std::string& key,
                                     const std::string& subject) {
  return Call("POST", "/executions", body.dump(), {{"Idempotency-Key", key}}, subject);
}

nlohmann::json BodyOf(const http::Response& response) {
  return nlohmann::json::parse(response.body, nullptr, false);
}

}  // namespace aevatar::chrono
