// The operators' view of a real stack (docs/operations.md): each service's
// /metrics parses with a third-party Prometheus text-format parser
// (parse-prometheus-text-format, pinned by scripts/setup) and moves when work
// is done; `--log-format json` lines carry request ids, and a failing
// request's diagnostic id is on its line; no line holds a token or source.

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "aevatar_stack.h"
#include "gtest/gtest.h"
#include "testing/metrics_text.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

constexpr char kNodeModules[] = "/opt/aevatar/test-node/node_modules";
constexpr char kParser[] = "/opt/aevatar/test-node/node_modules/parse-prometheus-text-format";

// One scrape as the parser read it: family name -> TYPE, series -> value.
struct Scrape {
  bool ok = false;
  std::string error;
  std::map<std::string, std::string> families;
  std::map<std::string, double> samples;
  std::string text;  // the exposition as served
  double Value(const std::string& series) const {
    auto it = samples.find(series);
    return it == samples.end() ? 0 : it->second;
  }
  // The value on the exposition's own line for `series` (exactly as
  // rendered), 0 when absent. For labelled histograms: the third-party
  // parser keeps a histogram's buckets but drops its labels, so their
  // per-route _count is read from the text the parser has accepted.
  double RawValue(const std::string& series) const { return SeriesValue(text, series).value_or(0); }
};

Scrape ScrapeMetrics(const std::string& base_url, const std::string& dir) {
  Scrape scrape;
  http::ClientRequest request;
  request.method = "GET";
  request.url = base_url + "/metrics";
  request.timeout = std::chrono::seconds(60);
  auto response = http::Fetch(request);
  if (!response.ok() || response->status != 200) {
    scrape.error = response.ok() ? response->body : std::string(response.status().message());
    return scrape;
  }
  if (!absl::StartsWith(response->headers.Get("Content-Type").value_or(""), "text/plain")) {
    scrape.error = "content type is not text/plain";
    return scrape;
  }
  const std::string file = dir + "/metrics.txt";
  std::ofstream(file) << response->body;
  const ShellRun run =
      RunShell(dir, std::string("NODE_PATH=") + kNodeModules + " node " + AEVATAR_SOURCE_DIR +
                        "/tests/integration/prometheus_scrape.cjs " + file);
  if (run.exit_code != 0) {
    scrape.error = "the parser refused the exposition: " + run.err + "\n" + response->body;
    return scrape;
  }
  const nlohmann::json parsed = nlohmann::json::parse(run.out, nullptr, false);
  if (!parsed.is_object()) {
    scrape.error = "the parser printed no JSON: " + run.out;
    return scrape;
  }
  for (const auto& [name, type] : parsed["families"].items()) scrape.families[name] = type;
  for (const auto& [series, value] : parsed["samples"].items()) {
    if (value.is_number()) scrape.samples[series] = value.get<double>();
  }
  scrape.text = response->body;
  scrape.ok = true;
  return scrape;
}

// Every family is typed (a sample outside its # TYPE block would come back
// UNTYPED) and the named families are there.
void ExpectFamilies(const Scrape& scrape, const std::set<std::string>& expected) {
  for (const auto& [name, type] : scrape.families) {
    EXPECT_NE(type, "UNTYPED") << name << " has samples outside its # TYPE block";
  }
  for (const std::string& name : expected) {
    EXPECT_TRUE(scrape.families.count(name)) << name << " is missing";
  }
}

class OperatorMetrics : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::vector<std::string> json = {"--log-format", "json"};
    stack_ = new AevatarStack(AevatarStackOptions{.users_yaml = kAliceWithChronoRoute,
                                                  .nyxid_args = json,
                                                  .aevatar_args = json,
                                                  .chrono_args = json,
                                                  .aevatar_port = 0,
                                                  .catalog_yaml = ""});
  }
  static void TearDownTestSuite() { delete stack_; }
  void SetUp() override {
    if (::access(kParser, R_OK) != 0) {
      GTEST_SKIP() << "parse-prometheus-text-format is not installed (scripts/setup installs it)";
    }
    ASSERT_TRUE(stack_->ok());
  }
  static AevatarStack& s() { return *stack_; }
  static AevatarStack* stack_;
  TempDir dir_;
};
AevatarStack* OperatorMetrics::stack_ = nullptr;

TEST_F(OperatorMetrics, EveryServicesMetricsParseAndMoveWhenWorkIsDone) {
  const std::string chrono_url = s().chrono().base_url();
  const std::string nyxid_url = s().nyxid().url();
  const std::string aevatar_url = s().aevatar().base_url();
  const Scrape chrono0 = ScrapeMetrics(chrono_url, dir_.path());
  const Scrape nyxid0 = ScrapeMetrics(nyxid_url, dir_.path());
  const Scrape aevatar0 = ScrapeMetrics(aevatar_url, dir_.path());
  ASSERT_TRUE(chrono0.ok) << chrono0.error;
  ASSERT_TRUE(nyxid0.ok) << nyxid0.error;
  ASSERT_TRUE(aevatar0.ok) << aevatar0.error;

  // The work: a refused login, a login, and a code_execute through the
  // whole chain (aevatar -> NyxID's proxy -> chrono-sandbox).
  EXPECT_TRUE(s().nyxid().Login("alice", "not-the-password").empty());
  const std::string token = s().Login("alice");
  ASSERT_FALSE(token.empty());
  auto run = s().Execute(token, {{"language", "python"}, {"source", "print(6 * 7)"}});
  ASSERT_EQ(run.status, 200) << run.body;

  const Scrape chrono1 = ScrapeMetrics(chrono_url, dir_.path());
  const Scrape nyxid1 = ScrapeMetrics(nyxid_url, dir_.path());
  const Scrape aevatar1 = ScrapeMetrics(aevatar_url, dir_.path());
  ASSERT_TRUE(chrono1.ok) << chrono1.error;
  ASSERT_TRUE(nyxid1.ok) << nyxid1.error;
  ASSERT_TRUE(aevatar1.ok) << aevatar1.error;

  ExpectFamilies(chrono1, {"chrono_http_requests_total", "chrono_http_request_duration_seconds",
                           "chrono_runs_total", "chrono_run_duration_seconds", "chrono_queue_depth",
                           "chrono_running", "chrono_codex_runs_total", "chrono_codex_running"});
  ExpectFamilies(nyxid1, {"nyxid_http_requests_total", "nyxid_http_request_duration_seconds",
                          "nyxid_logins_total", "nyxid_tokens_minted_total",
                          "nyxid_proxy_exchanges_total", "nyxid_proxy_upstream_duration_seconds"});
  ExpectFamilies(aevatar1, {"aevatar_http_requests_total", "aevatar_http_request_duration_seconds",
                            "aevatar_tool_calls_total", "aevatar_workflow_runs_total",
                            "aevatar_workflow_run_duration_seconds", "aevatar_codex_runs_total",
                            "aevatar_approvals_pending"});

  auto moved = [](const Scrape& before, const Scrape& after, const std::string& series) {
    EXPECT_GT(after.Value(series), before.Value(series)) << series;
  };
  moved(chrono0, chrono1, "chrono_runs_total{verdict=\"ok\"}");
  moved(chrono0, chrono1, "chrono_run_duration_seconds_count");
  moved(nyxid0, nyxid1, "nyxid_logins_total{outcome=\"succeeded\"}");
  moved(nyxid0, nyxid1, "nyxid_logins_total{outcome=\"login_failed\"}");
  moved(nyxid0, nyxid1, "nyxid_tokens_minted_total{kind=\"access\"}");
  moved(nyxid0, nyxid1, "nyxid_tokens_minted_total{kind=\"delegation\"}");
  moved(nyxid0, nyxid1, "nyxid_proxy_exchanges_total{status=\"200\"}");
  moved(nyxid0, nyxid1, "nyxid_proxy_upstream_duration_seconds_count");
  auto moved_raw = [](const Scrape& before, const Scrape& after, const std::string& series) {
    EXPECT_GT(after.RawValue(series), before.RawValue(series)) << series;
  };
  moved_raw(nyxid0, nyxid1,
            "nyxid_http_request_duration_seconds_count{route=\"/api/v1/auth/login\"}");
  moved(aevatar0, aevatar1, "aevatar_tool_calls_total{outcome=\"ok\",tool=\"code_execute\"}");
  moved(aevatar0, aevatar1,
        "aevatar_http_requests_total{route=\"/api/tools/code_execute\",status=\"200\"}");
  moved_raw(aevatar0, aevatar1,
            "aevatar_http_request_duration_seconds_count{route=\"/api/tools/code_execute\"}");
  // The scrape itself is a request: /metrics counts as a route like any other.
  moved(chrono0, chrono1, "chrono_http_requests_total{route=\"/metrics\",status=\"200\"}");
}

// The lines of `log`, each parsed; a line that is not a JSON object fails.
std::vector<nlohmann::json> JsonLines(const std::string& log, const std::string& service) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // the last line may still be being written
    nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
    EXPECT_TRUE(parsed.is_object()) << service << " wrote a line that is not JSON: " << line;
    if (!parsed.is_object()) continue;
    EXPECT_TRUE(parsed.contains("ts") && parsed.contains("level") && parsed.contains("event"))
        << service << ": " << line;
    lines.push_back(std::move(parsed));
  }
  return lines;
}

TEST_F(OperatorMetrics, JsonLogLinesCarryRequestIdsAndAFailuresDiagnosticId) {
  const std::string token = s().Login("alice");
  ASSERT_FALSE(token.empty());
  // Work whose secrets must not reach a log: the token and the program.
  const std::string marker = "operator_log_marker_" + std::to_string(::getpid());
  auto run = s().Execute(token, {{"language", "python"}, {"source", "x = '" + marker + "'"}});
  ASSERT_EQ(run.status, 200) << run.body;

  // A failing request with the caller's own request id.
  const std::string request_id = "ops-test:" + std::to_string(::getpid());
  http::ClientRequest request;
  request.method = "POST";
  request.url = s().aevatar().base_url() + "/api/tools/code_execute";
  request.body = "{\"language\": 5}";
  request.timeout = std::chrono::seconds(60);
  request.headers.Set("Content-Type", "application/json");
  request.headers.Set("Authorization", "Bearer " + token);
  request.headers.Set("X-Request-Id", request_id);
  auto failed = http::Fetch(request);
  ASSERT_TRUE(failed.ok());
  ASSERT_EQ(failed->status, 400) << failed->body;
  EXPECT_EQ(failed->headers.Get("X-Request-Id").value_or(""), request_id);
  const nlohmann::json problem = nlohmann::json::parse(failed->body, nullptr, false);
  ASSERT_TRUE(problem.is_object()) << failed->body;
  EXPECT_EQ(problem.value("request_id", ""), request_id);
  const std::string diagnostic_id = problem.value("diagnostic_id", "");
  ASSERT_FALSE(diagnostic_id.empty());
  ASSERT_TRUE(s().aevatar().WaitForLog(diagnostic_id));

  // An id that is not sane is replaced by a generated one.
  request.headers.Set("X-Request-Id", "bad id with spaces");
  auto replaced = http::Fetch(request);
  ASSERT_TRUE(replaced.ok());
  EXPECT_TRUE(absl::StartsWith(replaced->headers.Get("X-Request-Id").value_or(""), "req_"));

  bool found_failure_line = false;
  for (const nlohmann::json& line : JsonLines(s().aevatar().ReadLog(), "aevatar")) {
    if (line.value("event", "") == "http.request") {
      EXPECT_FALSE(line.value("request_id", "").empty()) << line.dump();
    }
    if (line.value("diagnostic_id", "") == diagnostic_id) {
      found_failure_line = true;
      EXPECT_EQ(line.value("request_id", ""), request_id) << line.dump();
      EXPECT_EQ(line.value("status", 0), 400) << line.dump();
    }
  }
  EXPECT_TRUE(found_failure_line) << "no aevatar line carries " << diagnostic_id;

  // NyxID and chrono-sandbox: every line is JSON, every request line has an id.
  ASSERT_TRUE(s().nyxid().service().WaitForSentinel("/api/v1/me"));
  ASSERT_TRUE(s().chrono().WaitForSentinel("/executions/op_sentinel"));
  for (ServiceProcess* service : {&s().nyxid().service(), &s().chrono()}) {
    size_t requests = 0;
    for (const nlohmann::json& line : JsonLines(service->ReadLog(), service->log_path())) {
      if (line.value("event", "") != "http.request") continue;
      ++requests;
      EXPECT_TRUE(absl::StartsWith(line.value("request_id", ""), "req_")) << line.dump();
    }
    EXPECT_GT(requests, 0u) << service->log_path();
  }
  for (ServiceProcess* service : {&s().aevatar(), &s().nyxid().service(), &s().chrono()}) {
    const std::string log = service->ReadLog();
    EXPECT_FALSE(absl::StrContains(log, token)) << service->log_path() << " holds the token";
    EXPECT_FALSE(absl::StrContains(log, marker)) << service->log_path() << " holds the source";
  }
}

}  // namespace
}  // namespace aevatar::testing
