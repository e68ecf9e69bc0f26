#include "base/problem_json.h"

#include <string>

#include "absl/status/status.h"
#include "base/api_error.h"
#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

TEST(ProblemJson, ReadsTheFieldsOfAWellFormedProblem) {
  auto problem = ParseProblemJson(
      R"({"type":"https://aevatar.dev/problems/queue_full","title":"Too Many Requests",
          "status":429,"detail":"the queue is full","code":"QUEUE_FULL",
          "remediation":"retry later","diagnostic_id":"diag_0123456789abcdef"})");
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->status, 429);
  EXPECT_EQ(problem->code, "QUEUE_FULL");
  EXPECT_EQ(problem->title, "Too Many Requests");
  EXPECT_EQ(problem->detail, "the queue is full");
  EXPECT_EQ(problem->remediation, "retry later");
  EXPECT_EQ(problem->diagnostic_id, "diag_0123456789abcdef");
}

TEST(ProblemJson, AFieldOfTheWrongTypeIsLeftEmptyNotThrown) {
  // Each of these made `value("code", "")`-style reads throw type_error.
  auto problem = ParseProblemJson(
      R"({"status":"429","code":5,"detail":["x"],"remediation":{},"diagnostic_id":true})");
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->status, 0);
  EXPECT_EQ(problem->code, "");
  EXPECT_EQ(problem->detail, "");
  EXPECT_EQ(problem->remediation, "");
  EXPECT_EQ(problem->diagnostic_id, "");
}

TEST(ProblemJson, NonObjectsAreInvalidArgument) {
  for (const char* body : {"", "null", "[]", "\"QUEUE_FULL\"", "<html>", "{\"code\":"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseProblemJson(body).status())) << body;
  }
}

TEST(ProblemJson, TokensThatAreNotPlainAreDropped) {
  auto problem =
      ParseProblemJson(R"({"code":"QUEUE FULL\n","diagnostic_id":"diag_1; rm -rf","status":42})");
  ASSERT_TRUE(problem.ok());
  EXPECT_EQ(problem->code, "");
  EXPECT_EQ(problem->diagnostic_id, "");
  EXPECT_EQ(problem->status, 0);
  const std::string long_code(kMaxProblemTokenBytes + 1, 'A');
  EXPECT_EQ(ProblemCodeOf(nlohmann::json{{"code", long_code}}), "");
  EXPECT_EQ(ProblemCodeOf(nlohmann::json{{"code", "code_execution_response_invalid"}}),
            "code_execution_response_invalid");
  EXPECT_EQ(ProblemCodeOf(nlohmann::json::array()), "");
}

TEST(ProblemJson, TextIsBoundedAndHasNoControlCharacters) {
  const std::string escape = "\x1b[2J\r\nforged line";
  auto problem =
      ProblemFromJson(nlohmann::json{{"detail", escape}, {"title", std::string(5000, 't')}});
  ASSERT_TRUE(problem.ok());
  EXPECT_EQ(problem->detail, "?[2J??forged line");
  EXPECT_EQ(problem->title.size(), kMaxProblemTextBytes);
}

}  // namespace
}  // namespace aevatar::base
