// A runtime environment through the three real binaries: code_execute at
// aevatar chooses python-data, NyxID's proxy carries the call, and
// chrono-sandbox runs a pandas aggregation in that runtime; unknown and
// other-language runtimes come back as typed 400s; tools and readiness list
// the runtime.
#include <filesystem>

#include "aevatar_stack.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

// scripts/setup prepares it (scripts/python-runtime).
constexpr char kPythonDataRoot[] = "/var/lib/aevatar/runtimes/python-data";

constexpr char kRuntimeUsers[] = R"yaml(
users:
  - {username: alice, password: pw-alice}
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
)yaml";

class AevatarRuntimes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    AevatarStackOptions options;
    options.users_yaml = kRuntimeUsers;
    options.chrono_args = {"--runtime", std::string("python-data=python:") + kPythonDataRoot};
    options.aevatar_args = {"--runtime", "python-data=python"};
    stack_ = new AevatarStack(std::move(options));
  }
  static void TearDownTestSuite() { delete stack_; }
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(std::string(kPythonDataRoot) + "/pyvenv.cfg"))
        << kPythonDataRoot << " is missing: run scripts/setup";
    ASSERT_TRUE(stack_->ok());
  }
  static AevatarStack& s() { return *stack_; }
  static AevatarStack* stack_;
};
AevatarStack* AevatarRuntimes::stack_ = nullptr;

TEST_F(AevatarRuntimes, CodeExecuteRunsAPandasAggregationInTheChosenRuntime) {
  const std::string token = s().Login("alice");
  ASSERT_FALSE(token.empty());
  const std::string source =
      "import pandas as pd\n"
      "orders = pd.DataFrame({'sku': ['a', 'b', 'a', 'c', 'a'], 'qty': [1, 2, 3, 4, 5]})\n"
      "print(orders.groupby('sku')['qty'].sum().to_json())\n";
  auto r =
      s().Execute(token, {{"language", "python"}, {"runtime", "python-data"}, {"source", source}});
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json body = JsonOf(r);
  EXPECT_EQ(body["stdout"], "{\"a\":9,\"b\":2,\"c\":4}\n") << body["stderr"];
  EXPECT_EQ(body["verdict"], "ok");

  auto plain = s().Execute(token, {{"language", "python"}, {"source", source}});
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(JsonOf(plain)["verdict"], "nonzero_exit") << "the default python has no pandas";
}

TEST_F(AevatarRuntimes, UnknownAndOtherLanguageRuntimesAreTyped400s) {
  const std::string token = s().Login("alice");
  ASSERT_FALSE(token.empty());
  struct Case {
    nlohmann::json args;
    const char* code;
  };
  for (const Case& c : {
           Case{{{"language", "python"}, {"runtime", "nope"}, {"source", "print(1)"}},
                "UNKNOWN_RUNTIME"},
           Case{{{"language", "bash"}, {"runtime", "python-data"}, {"source", "true"}},
                "RUNTIME_LANGUAGE_MISMATCH"},
           Case{{{"language", "python"}, {"runtime", ""}, {"source", "print(1)"}},
                "UNKNOWN_RUNTIME"},
       }) {
    auto r = s().Execute(token, c.args);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.headers.Get("Content-Type").value_or(""), "application/problem+json");
    const nlohmann::json body = JsonOf(r);
    EXPECT_EQ(body.value("code", ""), c.code) << r.body;
    EXPECT_FALSE(body.value("diagnostic_id", "").empty()) << r.body;
    EXPECT_EQ(r.body.find(kPythonDataRoot), std::string::npos);
  }
}

TEST_F(AevatarRuntimes, ToolsAndReadinessListTheRuntime) {
  const std::string token = s().Login("alice");
  ASSERT_FALSE(token.empty());
  const nlohmann::json expected =
      nlohmann::json::parse(R"([{"name": "python-data", "language": "python"}])");
  auto tools = s().Aevatar("GET", "/api/tools", token);
  ASSERT_EQ(tools.status, 200) << tools.body;
  const nlohmann::json code_execute = JsonOf(tools)["tools"][0];
  ASSERT_EQ(code_execute["name"], "code_execute");
  EXPECT_EQ(code_execute["runtimes"], expected);
  EXPECT_EQ(code_execute["input_schema"]["properties"]["runtime"]["enum"],
            nlohmann::json::parse(R"(["python-data"])"));
  auto readiness = s().Aevatar("GET", "/api/capabilities/code_execute/readiness", token);
  ASSERT_EQ(readiness.status, 200) << readiness.body;
  EXPECT_EQ(JsonOf(readiness)["runtimes"], expected);
  EXPECT_EQ(tools.body.find(kPythonDataRoot), std::string::npos);
}

}  // namespace
}  // namespace aevatar::testing
