#include "aevatar/clients/execution_replies.h"

#include <string>

#include "base/api_error.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

void ExpectResponseInvalid(const absl::Status& status, const std::string& field) {
  EXPECT_EQ(base::ApiCode(status), kResponseInvalidCode) << status;
  EXPECT_EQ(base::HttpStatusFor(status), 502) << status;
  EXPECT_NE(std::string(status.message()).find(field), std::string::npos) << status;
}

json ChronoResult() {
  // What chrono-sandbox's ExecuteResultJson writes for a finished program.
  return json::parse(R"({"success": true, "exit_code": 0, "stdout": "hi\n", "stderr": "",
      "execution_time_ms": 42, "timed_out": false, "verdict": "ok",
      "stdout_truncated": false, "stderr_truncated": false})");
}

TEST(ParseExecutionResult, ReadsTheExecutorsResult) {
  auto result = ParseExecutionResult(ChronoResult());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->success);
  EXPECT_EQ(result->exit_code, 0);
  EXPECT_EQ(result->stdout_text, "hi\n");
  EXPECT_EQ(result->verdict, "ok");
  EXPECT_EQ(result->execution_time_ms, 42);
  EXPECT_EQ(result->status, "");
}

TEST(ParseExecutionResult, ReadsTheDurableResultOfAnOperationThatNeverRan) {
  // executions_api.cc's document for outcome_uncertain: exit_code null, no verdict.
  auto result = ParseExecutionResult(json::parse(R"({"success": false, "exit_code": null,
      "stdout": "", "stderr": "", "timed_out": false, "stdout_truncated": false,
      "stderr_truncated": false, "operation_id": "op_abc", "status": "outcome_uncertain"})"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->exit_code.has_value());
  EXPECT_FALSE(result->execution_time_ms.has_value());
  EXPECT_EQ(result->status, "outcome_uncertain");
  EXPECT_EQ(result->operation_id, "op_abc");
}

TEST(ParseExecutionResult, AMemberOfTheWrongTypeIsATypedFailureNeverAThrow) {
  // Each of these made run_turns.cc's value("stdout", "")-style reads throw
  // nlohmann::json::type_error.
  const std::pair<const char*, json> cases[] = {
      {"stdout", 5},
      {"stderr", json::array()},
      {"success", "true"},
      {"exit_code", "0"},
      {"exit_code", 1.5},
      {"timed_out", 1},
      {"verdict", false},
      {"execution_time_ms", -1},
      {"execution_time_ms", "42"},
      {"status", 7},
      {"status", "exploded"},
      {"operation_id", "op_../x"},
      {"stdout_truncated", "no"},
  };
  for (const auto& [field, value] : cases) {
    json body = ChronoResult();
    body[field] = value;
    auto result = ParseExecutionResult(body);
    ASSERT_FALSE(result.ok()) << field << "=" << value.dump();
    ExpectResponseInvalid(result.status(), field);
  }
  for (const char* required : {"success", "stdout", "stderr"}) {
    json body = ChronoResult();
    body.erase(required);
    ExpectResponseInvalid(ParseExecutionResult(body).status(), required);
  }
  for (const json& not_an_object : {json(), json::array(), json("ok"), json(200)}) {
    EXPECT_EQ(base::ApiCode(ParseExecutionResult(not_an_object).status()), kResponseInvalidCode);
  }
}

TEST(ParseExecutionResult, ErrorsNeverEchoTheValue) {
  json body = ChronoResult();
  body["stdout"] = json::array({"the program's secret output"});
  auto result = ParseExecutionResult(body);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(std::string(result.status().message()).find("secret"), std::string::npos);
}

TEST(ParseExecutionResult, ToJsonRoundTrips) {
  for (const json& body :
       {ChronoResult(), json::parse(R"({"success": false, "stdout": "", "stderr": "boom",
                                        "exit_code": null, "status": "failed"})")}) {
    auto first = ParseExecutionResult(body);
    ASSERT_TRUE(first.ok()) << first.status();
    auto second = ParseExecutionResult(first->ToJson());
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(*first, *second);
  }
}

TEST(ParseExecutionStatus, ReadsAStatusDocument) {
  auto status = ParseExecutionStatus(json::parse(
      R"({"operation_id": "op_abc", "status": "running", "created_at": "2026-01-01T00:00:00Z",
          "expires_at": "2026-01-02T00:00:00.000Z", "done": false})"));
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->status, "running");
  EXPECT_EQ(status->operation_id, "op_abc");
  EXPECT_EQ(status->expires_at_ms, 1'767'312'000'000);
}

TEST(ParseExecutionStatus, WrongTypesAndUnknownStatusesAreInvalid) {
  for (const char* text : {
           R"({"status": 5})",
           R"({"status": "exploded"})",
           R"({})",
           R"({"status": "running", "operation_id": 12})",
           R"({"status": "running", "operation_id": "op_A"})",
           R"({"status": "running", "expires_at": 1767312000})",
           R"([])",
       }) {
    auto status = ParseExecutionStatus(json::parse(text));
    EXPECT_EQ(base::ApiCode(status.status()), kResponseInvalidCode) << text;
  }
  // An unparsable time is metadata, not a failure.
  auto status = ParseExecutionStatus(json::parse(R"({"status": "queued", "expires_at": "soon"})"));
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->expires_at_ms, 0);
}

TEST(ParseExecutionReceipt, RequiresAValidOperationId) {
  auto receipt = ParseExecutionReceipt(
      json::parse(R"({"operation_id": "op_abc", "status_url": "/elsewhere"})"));
  ASSERT_TRUE(receipt.ok()) << receipt.status();
  EXPECT_EQ(receipt->status, "queued");
  for (const char* text : {R"({"status": "queued"})", R"({"operation_id": "../op"})",
                           R"({"operation_id": ["op_abc"]})"}) {
    EXPECT_EQ(base::ApiCode(ParseExecutionReceipt(json::parse(text)).status()),
              kResponseInvalidCode)
        << text;
  }
}

}  // namespace
}  // namespace aevatar::orchestrator
