// POST /codex/execute's HTTP contract on the real chrono-sandbox binary:
// authentication, validation, availability, readiness and the concurrency
// bound.
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "codex_stack.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

http::ClientResponse Post(ChronoFixture& chrono, const std::string& body,
                          const std::string* token = nullptr) {
  return chrono.Call("POST", "/codex/execute", body, "alice", {}, token);
}

std::string ValidBody() { return CodexStack::Body("Reply with exactly OK").dump(); }

TEST(CodexApi, MissingOrUnscopedDelegationTokenIsRefused) {
  ChronoFixture chrono;
  ASSERT_TRUE(chrono.ok());
  const std::string none;
  auto missing = Post(chrono, ValidBody(), &none);
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(BodyJson(missing)["code"], "DELEGATION_TOKEN_MISSING");
  // sandbox:execute alone does not allow model calls through the proxy.
  const std::string unscoped = chrono.issuer().Delegation("alice", "sandbox:execute");
  auto forbidden = Post(chrono, ValidBody(), &unscoped);
  EXPECT_EQ(forbidden.status, 403) << forbidden.body;
  EXPECT_EQ(BodyJson(forbidden)["code"], "TOKEN_SCOPE_MISSING");
}

TEST(CodexApi, BadBodiesAre400CodexRequestInvalidWithoutEchoingThePrompt) {
  ChronoFixture chrono;
  ASSERT_TRUE(chrono.ok());
  for (const std::string& body : {std::string("{"), std::string("[]"),
                                  json{{"prompt", "SECRET-PROMPT"},
                                       {"model_route", {{"user_service_id", "u"}}},
                                       {"model", "x"}}
                                      .dump(),
                                  json{{"prompt", "SECRET-PROMPT"},
                                       {"timeout_secs", 0},
                                       {"model_route", {{"user_service_id", "u"}}}}
                                      .dump(),
                                  json{{"prompt", "SECRET-PROMPT"}}.dump()}) {
    auto response = Post(chrono, body);
    EXPECT_EQ(response.status, 400) << body;
    const json problem = BodyJson(response);
    EXPECT_EQ(problem["code"], "CODEX_REQUEST_INVALID") << body;
    EXPECT_TRUE(absl::StartsWith(problem.value("diagnostic_id", ""), "diag_"));
    EXPECT_FALSE(absl::StrContains(response.body, "SECRET-PROMPT"));
  }
}

TEST(CodexApi, UnconfiguredRunnerIs503AndReadyzSaysSo) {
  ChronoFixture chrono;  // no --codex-model
  ASSERT_TRUE(chrono.ok());
  auto response = Post(chrono, ValidBody());
  EXPECT_EQ(response.status, 503) << response.body;
  EXPECT_EQ(BodyJson(response)["code"], "CODEX_RUNNER_UNAVAILABLE");
  const json ready = BodyJson(chrono.Call("GET", "/readyz"));
  EXPECT_EQ(ready["status"], "ready");  // the rest of the executor is fine
  EXPECT_EQ(ready["codex"]["available"], false);
  EXPECT_TRUE(absl::StrContains(ready["codex"]["reason"].get<std::string>(), "--codex-model"));
}

TEST(CodexApi, MissingCodexBinaryIsUnavailable) {
  ChronoFixture chrono({"--codex-model", "m", "--nyxid-url", "http://127.0.0.1:9", "--codex-path",
                        "/nonexistent/codex"});
  ASSERT_TRUE(chrono.ok());
  EXPECT_EQ(Post(chrono, ValidBody()).status, 503);
  EXPECT_EQ(BodyJson(chrono.Call("GET", "/readyz"))["codex"]["available"], false);
}

TEST(CodexApi, BadCodexFlagsStopTheServiceAtStartUp) {
  for (std::vector<std::string> args : {std::vector<std::string>{"--codex-backend", "docker"},
                                        std::vector<std::string>{"--codex-model", "bad\"model"},
                                        std::vector<std::string>{"--codex-max-concurrent", "0"}}) {
    ChronoFixture chrono(args);
    EXPECT_FALSE(chrono.ok()) << args[0];
  }
}

TEST(CodexApi, ReadyzReportsAConfiguredRunner) {
  CodexStack stack("native");
  ASSERT_TRUE(stack.ok());
  const json ready = BodyJson(stack.chrono().Call("GET", "/readyz"));
  EXPECT_EQ(ready["codex"]["available"], true) << ready.dump();
}

TEST(CodexApi, PastTheConcurrencyBoundIs429WithRetryAfter) {
  CodexStack stack("native", {"--codex-max-concurrent", "1"});
  ASSERT_TRUE(stack.ok());
  http::ClientResponse first;
  std::thread runner([&] { first = stack.Execute(CodexStack::Body("Run `sleep 60`", 5)); });
  // The first run holds the only slot until its timeout.
  const bool busy = PollUntil(
      [&] { return absl::StrContains(stack.chrono().Metrics().body, "chrono_codex_running 1\n"); });
  http::ClientResponse second;
  if (busy) second = stack.Execute(CodexStack::Body("Reply with exactly NO"));
  runner.join();
  ASSERT_TRUE(busy);
  EXPECT_EQ(second.status, 429) << second.body;
  EXPECT_EQ(BodyJson(second)["code"], "CODEX_RUNNER_BUSY");
  EXPECT_TRUE(second.headers.Get("Retry-After").has_value());
  EXPECT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(BodyJson(first)["status"], "timed_out");
  EXPECT_TRUE(absl::StrContains(stack.chrono().Metrics().body,
                                "chrono_codex_runs_total{status=\"timed_out\"} 1"));
}

}  // namespace
}  // namespace aevatar::testing
