// Binding a run's typed inputs over the declared defaults.
#include <string>

#include "aevatar/workflow/workflow_definition.h"
#include "base/api_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workflow_test_util.h"

namespace aevatar::orchestrator {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

WorkflowDefinition Def() { return wftest::MustParse(wftest::ValidTree().dump()); }

void ExpectError(const absl::StatusOr<json>& bound, const std::string& code,
                 const std::string& path) {
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(base::ApiCode(bound.status()), code) << bound.status();
  EXPECT_EQ(bound.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bound.status().message()), StartsWith(path + ":"));
}

TEST(BindInputs, MergesProvidedValuesOverDefaults) {
  auto bound = BindInputs(Def(), {{"label", "hello"}, {"seconds", 9}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(*bound, json({{"seconds", 9}, {"label", "hello"}, {"verbose", false}}));
}

TEST(BindInputs, UsesTheDefaultWhenNotProvidedOrNull) {
  auto bound = BindInputs(Def(), {{"label", "x"}, {"seconds", nullptr}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ((*bound)["seconds"], 5);
}

TEST(BindInputs, BundledCheckDefaultsTo130Seconds) {
  WorkflowDefinition def = wftest::MustParse(wftest::BundledDurableCheckYaml());
  auto bound = BindInputs(def, nullptr);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(*bound, json({{"seconds", 130}}));
}

TEST(BindInputs, ConvertsCliStrings) {
  auto bound = BindInputs(Def(), {{"label", "130"}, {"seconds", "130"}, {"verbose", "true"}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ((*bound)["seconds"], json(130));
  EXPECT_TRUE((*bound)["seconds"].is_number_integer());
  EXPECT_EQ((*bound)["label"], json("130"));  // a string input stays a string
  EXPECT_EQ((*bound)["verbose"], json(true));
  auto negative = BindInputs(Def(), {{"label", "x"}, {"seconds", "-5"}, {"verbose", "false"}});
  ASSERT_TRUE(negative.ok()) << negative.status();
  EXPECT_EQ((*negative)["seconds"], -5);
  EXPECT_EQ((*negative)["verbose"], false);
}

TEST(BindInputs, RejectsUnconvertibleIntegerStrings) {
  for (const char* text : {"", " 130", "130 ", "13x", "1.5", "0x10", "+", "99999999999999999999"}) {
    SCOPED_TRACE(text);
    ExpectError(BindInputs(Def(), {{"label", "x"}, {"seconds", text}}), "WORKFLOW_INPUT_INVALID",
                "inputs.seconds");
  }
}

TEST(BindInputs, RejectsWrongJsonTypes) {
  ExpectError(BindInputs(Def(), {{"label", "x"}, {"seconds", 1.5}}), "WORKFLOW_INPUT_INVALID",
              "inputs.seconds");
  ExpectError(BindInputs(Def(), {{"label", "x"}, {"seconds", true}}), "WORKFLOW_INPUT_INVALID",
              "inputs.seconds");
  ExpectError(BindInputs(Def(), {{"label", 5}}), "WORKFLOW_INPUT_INVALID", "inputs.label");
  ExpectError(BindInputs(Def(), {{"label", "x"}, {"verbose", "yes"}}), "WORKFLOW_INPUT_INVALID",
              "inputs.verbose");
  ExpectError(BindInputs(Def(), {{"label", "x"}, {"verbose", 1}}), "WORKFLOW_INPUT_INVALID",
              "inputs.verbose");
}

TEST(BindInputs, RejectsAnOversizedString) {
  ExpectError(BindInputs(Def(), {{"label", std::string(kMaxStringInputBytes + 1, 'a')}}),
              "WORKFLOW_INPUT_INVALID", "inputs.label");
}

TEST(BindInputs, RejectsAnUnknownName) {
  ExpectError(BindInputs(Def(), {{"label", "x"}, {"secs", 1}}), "WORKFLOW_INPUT_UNKNOWN",
              "inputs.secs");
}

TEST(BindInputs, RejectsAMissingInputWithoutDefault) {
  ExpectError(BindInputs(Def(), json::object()), "WORKFLOW_INPUT_MISSING", "inputs.label");
  ExpectError(BindInputs(Def(), {{"label", nullptr}}), "WORKFLOW_INPUT_MISSING", "inputs.label");
}

TEST(BindInputs, RejectsNonObjectInputs) {
  ExpectError(BindInputs(Def(), json::array({"seconds=1"})), "WORKFLOW_INPUT_INVALID", "inputs");
}

TEST(BindInputs, ErrorsNeverEchoTheValue) {
  auto bound = BindInputs(Def(), {{"label", "x"}, {"seconds", "SECRET_VALUE"}});
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(std::string(bound.status().message()), Not(HasSubstr("SECRET_VALUE")));
}

}  // namespace
}  // namespace aevatar::orchestrator
