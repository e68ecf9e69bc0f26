// Evaluating a step's expectation, and its authored form.
#include "aevatar/workflow/workflow_expect.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workflow_test_util.h"

namespace aevatar::orchestrator {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

StepExpectation Bundled() {
  WorkflowDefinition def = wftest::MustParse(wftest::BundledDurableCheckYaml());
  return def.steps.empty() || !def.steps[0].expect ? StepExpectation{} : *def.steps[0].expect;
}

json Output(std::string stdout_text, json exit_code = 0, std::string status = "succeeded") {
  return {{"stdout", stdout_text},
          {"stderr", ""},
          {"exit_code", exit_code},
          {"status", status},
          {"diagnostic_id", "diag_1"}};
}

TEST(EvaluateExpectation, BundledCheckPassesOnTheMarker) {
  ExpectationResult result = EvaluateExpectation(Bundled(), Output("AEVATAR_DURABLE_GT125_OK\n"));
  EXPECT_TRUE(result.passed);
  EXPECT_THAT(result.failures, IsEmpty());
}

TEST(EvaluateExpectation, TrimmedOutputMismatchNeverEchoesTheOutput) {
  ExpectationResult result =
      EvaluateExpectation(Bundled(), Output("SECRET_OUTPUT AEVATAR_DURABLE_GT125_OK"));
  EXPECT_FALSE(result.passed);
  ASSERT_THAT(result.failures, ElementsAre("trimmed stdout differs"));
  for (const std::string& failure : result.failures) {
    EXPECT_THAT(failure, Not(HasSubstr("SECRET_OUTPUT")));
  }
}

TEST(EvaluateExpectation, CollectsEveryFailedCheck) {
  ExpectationResult result =
      EvaluateExpectation(Bundled(), Output("AEVATAR_DURABLE_GT125_OK", 1, "failed"));
  EXPECT_FALSE(result.passed);
  EXPECT_THAT(result.failures,
              ElementsAre("equals: field 'exit_code' differs", "equals: field 'status' differs"));
}

TEST(EvaluateExpectation, EqualsComparesJsonValuesExactly) {
  StepExpectation expect;
  expect.equals = {{"exit_code", 0}, {"status", "succeeded"}};
  EXPECT_TRUE(EvaluateExpectation(expect, {{"exit_code", 0u}, {"status", "succeeded"}}).passed);
  EXPECT_FALSE(EvaluateExpectation(expect, {{"exit_code", "0"}, {"status", "succeeded"}}).passed);
  ExpectationResult missing = EvaluateExpectation(expect, {{"status", "succeeded"}});
  EXPECT_THAT(missing.failures, ElementsAre("equals: field 'exit_code' is missing"));
}

TEST(EvaluateExpectation, TrimmedOutputNeedsStdout) {
  StepExpectation expect;
  expect.trimmed_output_equals = "ok";
  EXPECT_TRUE(EvaluateExpectation(expect, {{"stdout", "\r\n ok \t"}}).passed);
  EXPECT_FALSE(EvaluateExpectation(expect, {{"stdout", "o k"}}).passed);
  EXPECT_THAT(EvaluateExpectation(expect, json::object()).failures,
              ElementsAre("trimmed_output_equals: stdout is missing"));
}

TEST(EvaluateExpectation, ExitCodeMustBeAnIntegerThatMatches) {
  StepExpectation expect;
  expect.exit_code = 0;
  EXPECT_TRUE(EvaluateExpectation(expect, {{"exit_code", 0}}).passed);
  EXPECT_THAT(EvaluateExpectation(expect, {{"exit_code", 2}}).failures,
              ElementsAre("exit_code differs"));
  EXPECT_THAT(EvaluateExpectation(expect, {{"exit_code", nullptr}}).failures,
              ElementsAre("exit_code: missing"));
  EXPECT_FALSE(EvaluateExpectation(expect, json::object()).passed);
}

TEST(EvaluateExpectation, NonEmptyRejectsMissingNullAndEmpty) {
  StepExpectation expect;
  expect.non_empty = {"diagnostic_id"};
  EXPECT_TRUE(EvaluateExpectation(expect, {{"diagnostic_id", "d"}}).passed);
  EXPECT_TRUE(EvaluateExpectation(expect, {{"diagnostic_id", 0}}).passed);
  for (const json& output : {json::object(), json{{"diagnostic_id", nullptr}},
                             json{{"diagnostic_id", ""}}, json{{"diagnostic_id", json::array()}}}) {
    ExpectationResult result = EvaluateExpectation(expect, output);
    EXPECT_FALSE(result.passed) << output;
    EXPECT_THAT(result.failures,
                ElementsAre("non_empty: field 'diagnostic_id' is missing or empty"));
  }
}

TEST(EvaluateExpectation, ANonObjectOutputFailsEveryCheck) {
  ExpectationResult result = EvaluateExpectation(Bundled(), json("text"));
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.failures.size(), 3u);
}

TEST(EvaluateExpectation, AnEmptyExpectationPasses) {
  EXPECT_TRUE(EvaluateExpectation(StepExpectation{}, json::object()).passed);
}

TEST(ParseExpectation, RoundTripsTheCanonicalForm) {
  const json authored = json::parse(R"wf({
    "equals": {"status": "succeeded", "exit_code": 0, "timed_out": false, "note": null},
    "trimmed_output_equals": "OK",
    "exit_code": 0,
    "non_empty": ["diagnostic_id", "stdout"]
  })wf");
  auto expect = ParseExpectation(authored, "steps[0].expect");
  ASSERT_TRUE(expect.ok()) << expect.status();
  EXPECT_EQ(expect->equals.size(), 4u);
  EXPECT_EQ(expect->exit_code, 0);
  EXPECT_EQ(expect->non_empty, (std::vector<std::string>{"diagnostic_id", "stdout"}));
  EXPECT_EQ(ExpectationToJson(*expect), authored);
}

TEST(ParseExpectation, OmitsAbsentChecksInTheCanonicalForm) {
  auto expect = ParseExpectation({{"exit_code", 3}}, "e");
  ASSERT_TRUE(expect.ok()) << expect.status();
  EXPECT_EQ(ExpectationToJson(*expect), json({{"exit_code", 3}}));
}

}  // namespace
}  // namespace aevatar::orchestrator
