// Runtime environments through the real chrono-sandbox binary: a call that
// chooses python-data runs a pandas aggregation (synchronously and as a
// durable operation), an unknown runtime or one of another language is a
// typed 400, and readiness lists what exists (names and languages only).
#include <filesystem>

#include "chrono_client.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

// scripts/setup prepares it (scripts/python-runtime).
constexpr char kRoot[] = "/var/lib/aevatar/runtimes/python-data";

constexpr char kAggregation[] =
    "import pandas as pd\n"
    "df = pd.DataFrame({'team': ['red', 'blue', 'red', 'blue'], 'score': [3, 4, 5, 6]})\n"
    "print(df.groupby('team')['score'].sum().to_dict())\n";

class ChronoRuntimes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixture_ = new ChronoFixture({"--runtime", std::string("python-data=python:") + kRoot});
  }
  static void TearDownTestSuite() { delete fixture_; }
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(std::string(kRoot) + "/pyvenv.cfg"))
        << kRoot << " is missing: run scripts/setup";
    ASSERT_TRUE(fixture_->ok()) << fixture_->service().ReadLog();
  }
  static ChronoFixture& f() { return *fixture_; }
  static ChronoFixture* fixture_;
};
ChronoFixture* ChronoRuntimes::fixture_ = nullptr;

void ExpectTyped400(const http::ClientResponse& r, const std::string& code) {
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.headers.Get("Content-Type").value_or(""), "application/problem+json");
  const nlohmann::json body = BodyJson(r);
  EXPECT_EQ(body.value("code", ""), code) << r.body;
  EXPECT_FALSE(body.value("diagnostic_id", "").empty()) << r.body;
  EXPECT_EQ(r.body.find(kRoot), std::string::npos) << "a problem names the host root";
}

TEST_F(ChronoRuntimes, APandasAggregationRunsInTheChosenRuntime) {
  const nlohmann::json request = {{"language", "python"},
                                  {"runtime", "python-data"},
                                  {"script", kAggregation},
                                  {"timeout_secs", 60}};
  auto r = f().Call("POST", "/execute", request.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json body = BodyJson(r);
  EXPECT_EQ(body["stdout"], "{'blue': 10, 'red': 8}\n") << body["stderr"];
  EXPECT_EQ(body["verdict"], "ok");
}

TEST_F(ChronoRuntimes, TheDefaultPythonDoesNotSeePandas) {
  const nlohmann::json request = {
      {"language", "python"}, {"script", kAggregation}, {"timeout_secs", 60}};
  auto r = f().Call("POST", "/execute", request.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json body = BodyJson(r);
  EXPECT_EQ(body["verdict"], "nonzero_exit");
  EXPECT_NE(body["stderr"].get<std::string>().find("No module named 'pandas'"), std::string::npos)
      << body["stderr"];
}

TEST_F(ChronoRuntimes, ADurableOperationKeepsItsRuntime) {
  const nlohmann::json request = {{"language", "python"},
                                  {"runtime", "python-data"},
                                  {"script", kAggregation},
                                  {"timeout_secs", 60}};
  auto submitted = f().Submit(request, "runtime-key-1");
  ASSERT_EQ(submitted.status, 202) << submitted.body;
  const std::string id = BodyJson(submitted).value("operation_id", "");
  ASSERT_FALSE(id.empty()) << submitted.body;
  const nlohmann::json done = f().WaitDone(id, 120);
  ASSERT_EQ(done.value("status", ""), "succeeded") << done.dump();
  auto result = f().Call("GET", "/executions/" + id + "/result");
  ASSERT_EQ(result.status, 200) << result.body;
  EXPECT_EQ(BodyJson(result)["stdout"], "{'blue': 10, 'red': 8}\n") << result.body;
  // The same key with the default runtime is another request.
  nlohmann::json other = request;
  other.erase("runtime");
  EXPECT_EQ(f().Submit(other, "runtime-key-1").status, 409);
}

TEST_F(ChronoRuntimes, UnknownWrongLanguageAndMalformedRuntimesAreTyped400s) {
  for (const char* route : {"/execute", "/executions"}) {
    SCOPED_TRACE(route);
    auto call = [&](const nlohmann::json& body) {
      return std::string(route) == "/execute" ? f().Call("POST", route, body.dump())
                                              : f().Submit(body, "bad-runtime-key");
    };
    ExpectTyped400(call({{"language", "python"}, {"runtime", "nope"}, {"script", "print(1)"}}),
                   "UNKNOWN_RUNTIME");
    ExpectTyped400(call({{"language", "bash"}, {"runtime", "python-data"}, {"script", "true"}}),
                   "RUNTIME_LANGUAGE_MISMATCH");
    ExpectTyped400(call({{"language", "python"}, {"runtime", 7}, {"script", "print(1)"}}),
                   "INVALID_FIELD_TYPE");
    ExpectTyped400(call({{"language", "python"}, {"runtime", ""}, {"script", "print(1)"}}),
                   "UNKNOWN_RUNTIME");
  }
}

TEST_F(ChronoRuntimes, ReadinessListsNamesAndLanguagesNotRoots) {
  auto r = f().Call("GET", "/readyz", "", "");
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json body = BodyJson(r);
  ASSERT_TRUE(body["runtimes"].is_array()) << r.body;
  EXPECT_EQ(body["runtimes"],
            nlohmann::json::parse(R"([{"name":"python-data","language":"python"}])"));
  EXPECT_EQ(r.body.find(kRoot), std::string::npos);
}

TEST(ChronoRuntimeConfig, AnUnusableRootStopsTheServiceNamingIt) {
  ChronoFixture broken({"--runtime", "gone=python:/nonexistent/aevatar-runtime"});
  EXPECT_FALSE(broken.ok());
  EXPECT_NE(broken.service().ReadLog().find("runtime \"gone\""), std::string::npos)
      << broken.service().ReadLog();
}

}  // namespace
}  // namespace aevatar::testing
