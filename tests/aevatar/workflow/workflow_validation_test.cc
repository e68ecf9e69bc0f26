// Every workflow schema rule, each rejected with its typed code and the path
// of the offending field, through both the YAML and the JSON entry points.
#include <functional>
#include <string>

#include "aevatar/workflow/workflow_definition.h"
#include "base/api_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workflow_test_util.h"

namespace aevatar::orchestrator {
namespace {

using json = nlohmann::json;
using ::testing::StartsWith;
using wftest::ValidTree;

constexpr char kInvalid[] = "WORKFLOW_INVALID";
constexpr char kRoute[] = "WORKFLOW_ROUTE_SELECTOR_FORBIDDEN";

struct TreeCase {
  std::string name;
  std::function<void(json&)> mutate;
  std::string code;
  std::string path;  // the detail starts with "<path>:"
};
// gtest prints a parameter by this (the test name), not as raw bytes.
void PrintTo(const TreeCase& c, std::ostream* os) { *os << c.name; }

class TreeRejection : public ::testing::TestWithParam<TreeCase> {};

TEST_P(TreeRejection, NamesThePathWithTheTypedCode) {
  json tree = ValidTree();
  GetParam().mutate(tree);
  auto from_json = WorkflowFromJson(tree);
  ASSERT_FALSE(from_json.ok());
  EXPECT_EQ(base::ApiCode(from_json.status()), GetParam().code) << from_json.status();
  EXPECT_EQ(from_json.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(from_json.status().message()), StartsWith(GetParam().path + ":"));
  // JSON is YAML: the YAML entry point reports the same error.
  auto from_yaml = ParseWorkflowYaml(tree.dump());
  ASSERT_FALSE(from_yaml.ok());
  EXPECT_EQ(from_yaml.status(), from_json.status());
}

TEST(TreeRejection, TheBaseTreeIsValid) {
  auto def = WorkflowFromJson(ValidTree());
  EXPECT_TRUE(def.ok()) << def.status();
}

// Shorthands for the mutations.
json& Step(json& t, int i) { return t["steps"][i]; }
json& Args(json& t, int i) { return t["steps"][i]["arguments"]; }
json& Input(json& t, int i) { return t["inputs"][i]; }

TreeCase C(std::string name, std::function<void(json&)> mutate, std::string path,
           std::string code = kInvalid) {
  return {std::move(name), std::move(mutate), std::move(code), std::move(path)};
}

INSTANTIATE_TEST_SUITE_P(
    Workflow, TreeRejection,
    ::testing::Values(
        C(
            "UnknownTopLevelField", [](json& t) { t["owner"] = "x"; }, "owner"),
        C(
            "WorkflowIdMissing", [](json& t) { t.erase("workflow_id"); }, "workflow_id"),
        C(
            "WorkflowIdUppercase", [](json& t) { t["workflow_id"] = "Check"; }, "workflow_id"),
        C(
            "WorkflowIdUnderscore", [](json& t) { t["workflow_id"] = "a_b"; }, "workflow_id"),
        C(
            "WorkflowIdTooLong", [](json& t) { t["workflow_id"] = std::string(64, 'a'); },
            "workflow_id"),
        C(
            "WorkflowIdNotString", [](json& t) { t["workflow_id"] = 7; }, "workflow_id"),
        C(
            "DescriptionNotString", [](json& t) { t["description"] = json::array(); },
            "description"),
        C(
            "DescriptionTooLong", [](json& t) { t["description"] = std::string(4097, 'd'); },
            "description")),
    [](const ::testing::TestParamInfo<TreeCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    RouteSelector, TreeRejection,
    ::testing::Values(
        C(
            "StepRoute", [](json& t) { Step(t, 0)["route"] = "r"; }, "steps[0].route", kRoute),
        C(
            "ArgumentNyxidVia", [](json& t) { Args(t, 1)["_nyxid_via"] = "us_1"; },
            "steps[1].arguments._nyxid_via", kRoute),
        C(
            "ArgumentUserServiceId", [](json& t) { Args(t, 0)["user_service_id"] = "us_1"; },
            "steps[0].arguments.user_service_id", kRoute),
        C(
            "ArgumentServiceId", [](json& t) { Args(t, 0)["service_id"] = "s"; },
            "steps[0].arguments.service_id", kRoute),
        C(
            "ArgumentVia", [](json& t) { Args(t, 0)["via"] = "s"; }, "steps[0].arguments.via",
            kRoute),
        C(
            "SpellingVariant", [](json& t) { Args(t, 0)["Route-ID"] = "s"; },
            "steps[0].arguments.Route-ID", kRoute),
        C(
            "NestedTargetRoute",
            [](json& t) {
              Args(t, 0)["env"] = {{"x", {{"target_route", 1}}}};
            },
            "steps[0].arguments.env.x.target_route", kRoute),
        C(
            "InsideExpect",
            [](json& t) {
              Step(t, 0)["expect"]["equals"] = {{"route_id", "r"}};
            },
            "steps[0].expect.equals.route_id", kRoute),
        C(
            "TopLevel", [](json& t) { t["route"] = "r"; }, "route", kRoute),
        C(
            "InputName", [](json& t) { Input(t, 1)["name"] = "nyxid_via"; }, "inputs[1].name",
            kRoute)),
    [](const ::testing::TestParamInfo<TreeCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Inputs, TreeRejection,
    ::testing::Values(
        C(
            "NotAList", [](json& t) { t["inputs"] = json::object(); }, "inputs"),
        C(
            "TooMany",
            [](json& t) {
              t["inputs"] = json::array();
              for (int i = 0; i < 65; ++i)
                t["inputs"].push_back({{"name", "i" + std::to_string(i)}, {"type", "string"}});
            },
            "inputs"),
        C(
            "ItemNotMapping", [](json& t) { t["inputs"][0] = "seconds"; }, "inputs[0]"),
        C(
            "UnknownField", [](json& t) { Input(t, 0)["required"] = true; }, "inputs[0].required"),
        C(
            "NameMissing", [](json& t) { Input(t, 0).erase("name"); }, "inputs[0].name"),
        C(
            "NameHyphen", [](json& t) { Input(t, 0)["name"] = "a-b"; }, "inputs[0].name"),
        C(
            "NameLeadingDigit", [](json& t) { Input(t, 0)["name"] = "1a"; }, "inputs[0].name"),
        C(
            "DuplicateName", [](json& t) { Input(t, 1)["name"] = "seconds"; }, "inputs[1].name"),
        C(
            "TypeMissing", [](json& t) { Input(t, 0).erase("type"); }, "inputs[0].type"),
        C(
            "TypeUnknown", [](json& t) { Input(t, 0)["type"] = "number"; }, "inputs[0].type"),
        C(
            "IntegerDefaultQuoted", [](json& t) { Input(t, 0)["default"] = "130"; },
            "inputs[0].default"),
        C(
            "IntegerDefaultFloat", [](json& t) { Input(t, 0)["default"] = 1.5; },
            "inputs[0].default"),
        C(
            "IntegerDefaultNull", [](json& t) { Input(t, 0)["default"] = nullptr; },
            "inputs[0].default"),
        C(
            "StringDefaultNumber", [](json& t) { Input(t, 1)["default"] = 3; },
            "inputs[1].default"),
        C(
            "StringDefaultTooLong",
            [](json& t) { Input(t, 1)["default"] = std::string(kMaxStringInputBytes + 1, 'x'); },
            "inputs[1].default"),
        C(
            "BooleanDefaultString", [](json& t) { Input(t, 2)["default"] = "true"; },
            "inputs[2].default"),
        C(
            "DescriptionNotString", [](json& t) { Input(t, 0)["description"] = 1; },
            "inputs[0].description")),
    [](const ::testing::TestParamInfo<TreeCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Steps, TreeRejection,
    ::testing::Values(
        C(
            "Missing", [](json& t) { t.erase("steps"); }, "steps"),
        C(
            "Empty", [](json& t) { t["steps"] = json::array(); }, "steps"),
        C(
            "NotAList", [](json& t) { t["steps"] = json::object(); }, "steps"),
        C(
            "TooMany",
            [](json& t) {
              json first = Step(t, 0);
              t["steps"] = json::array();
              for (int i = 0; i < 65; ++i) {
                first["id"] = "s" + std::to_string(i);
                t["steps"].push_back(first);
              }
            },
            "steps"),
        C(
            "ItemNotMapping", [](json& t) { t["steps"][1] = "run"; }, "steps[1]"),
        C(
            "UnknownField", [](json& t) { Step(t, 0)["retries"] = 3; }, "steps[0].retries"),
        C(
            "IdMissing", [](json& t) { Step(t, 0).erase("id"); }, "steps[0].id"),
        C(
            "IdUppercase", [](json& t) { Step(t, 0)["id"] = "First"; }, "steps[0].id"),
        C(
            "IdTooLong", [](json& t) { Step(t, 0)["id"] = std::string(64, 'a'); }, "steps[0].id"),
        C(
            "DuplicateId", [](json& t) { Step(t, 1)["id"] = "first"; }, "steps[1].id"),
        C(
            "ToolMissing", [](json& t) { Step(t, 0).erase("tool"); }, "steps[0].tool"),
        C(
            "ToolUnknown", [](json& t) { Step(t, 0)["tool"] = "shell"; }, "steps[0].tool"),
        C(
            "ArgumentsMissing", [](json& t) { Step(t, 0).erase("arguments"); },
            "steps[0].arguments"),
        C(
            "ArgumentsNotMapping", [](json& t) { Step(t, 0)["arguments"] = "x"; },
            "steps[0].arguments"),
        C(
            "TimeoutZero", [](json& t) { Step(t, 1)["timeout_ms"] = 0; }, "steps[1].timeout_ms"),
        C(
            "TimeoutTooLong", [](json& t) { Step(t, 1)["timeout_ms"] = kMaxStepTimeoutMs + 1; },
            "steps[1].timeout_ms"),
        C(
            "TimeoutString", [](json& t) { Step(t, 1)["timeout_ms"] = "20000"; },
            "steps[1].timeout_ms"),
        C(
            "TimeoutFloat", [](json& t) { Step(t, 1)["timeout_ms"] = 20000.5; },
            "steps[1].timeout_ms"),
        C(
            "TimeoutNotAboveProgramTimeout", [](json& t) { Step(t, 1)["timeout_ms"] = 10'000; },
            "steps[1].timeout_ms")),
    [](const ::testing::TestParamInfo<TreeCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    CodeExecuteArguments, TreeRejection,
    ::testing::Values(
        C(
            "UnknownArgument", [](json& t) { Args(t, 0)["files"] = json::array(); },
            "steps[0].arguments.files"),
        C(
            "LanguageMissing", [](json& t) { Args(t, 0).erase("language"); },
            "steps[0].arguments.language"),
        C(
            "LanguageUnknown", [](json& t) { Args(t, 0)["language"] = "ruby"; },
            "steps[0].arguments.language"),
        C(
            "LanguageEscapedIsLiteral",
            [](json& t) { Args(t, 0)["language"] = "$${inputs.label}"; },
            "steps[0].arguments.language"),
        C(
            "SourceMissing", [](json& t) { Args(t, 0).erase("source"); },
            "steps[0].arguments.source"),
        C(
            "SourceEmpty", [](json& t) { Args(t, 0)["source"] = ""; }, "steps[0].arguments.source"),
        C(
            "SourceNotString", [](json& t) { Args(t, 0)["source"] = json::array({"a"}); },
            "steps[0].arguments.source"),
        C(
            "TimeoutSecsZero", [](json& t) { Args(t, 0)["timeout_secs"] = 0; },
            "steps[0].arguments.timeout_secs"),
        C(
            "TimeoutSecsAboveMax", [](json& t) { Args(t, 0)["timeout_secs"] = 601; },
            "steps[0].arguments.timeout_secs"),
        C(
            "TimeoutSecsFloat", [](json& t) { Args(t, 0)["timeout_secs"] = 10.5; },
            "steps[0].arguments.timeout_secs"),
        C(
            "TimeoutSecsPlainString", [](json& t) { Args(t, 0)["timeout_secs"] = "180"; },
            "steps[0].arguments.timeout_secs"),
        C(
            "TimeoutSecsPartialTemplate",
            [](json& t) { Args(t, 0)["timeout_secs"] = "1${inputs.seconds}"; },
            "steps[0].arguments.timeout_secs"),
        C(
            "StdinNotString", [](json& t) { Args(t, 0)["stdin"] = 5; }, "steps[0].arguments.stdin"),
        C(
            "EnvNotMapping", [](json& t) { Args(t, 0)["env"] = json::array(); },
            "steps[0].arguments.env"),
        C(
            "EnvReservedNyxid",
            [](json& t) {
              Args(t, 0)["env"] = {{"NYXID_TOKEN", "x"}};
            },
            "steps[0].arguments.env.NYXID_TOKEN"),
        C(
            "EnvReservedLd",
            [](json& t) {
              Args(t, 0)["env"] = {{"LD_PRELOAD", "x"}};
            },
            "steps[0].arguments.env.LD_PRELOAD"),
        C(
            "EnvBadName",
            [](json& t) {
              Args(t, 0)["env"] = {{"1X", "x"}};
            },
            "steps[0].arguments.env.1X"),
        C(
            "EnvValueNotString",
            [](json& t) {
              Args(t, 0)["env"] = {{"X", 1}};
            },
            "steps[0].arguments.env.X")),
    [](const ::testing::TestParamInfo<TreeCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Templates, TreeRejection,
    ::testing::Values(
        C(
            "Unterminated", [](json& t) { Args(t, 0)["source"] = "print(${inputs.seconds)"; },
            "steps[0].arguments.source"),
        C(
            "UnknownRoot", [](json& t) { Args(t, 0)["source"] = "${env.HOME}"; },
            "steps[0].arguments.source"),
        C(
            "BashStyleVariable", [](json& t) { Args(t, 1)["source"] = "echo ${HOME}"; },
            "steps[1].arguments.source"),
        C(
            "UnknownStepField", [](json& t) { Args(t, 1)["source"] = "${steps.first.output}"; },
            "steps[1].arguments.source"),
        C(
            "UndeclaredInput", [](json& t) { Args(t, 0)["source"] = "${inputs.missing}"; },
            "steps[0].arguments.source"),
        C(
            "LaterStep", [](json& t) { Args(t, 0)["source"] = "${steps.second.stdout}"; },
            "steps[0].arguments.source"),
        C(
            "SameStep", [](json& t) { Args(t, 1)["source"] = "${steps.second.stdout}"; },
            "steps[1].arguments.source"),
        C(
            "UnknownStep", [](json& t) { Args(t, 1)["source"] = "${steps.nope.stdout}"; },
            "steps[1].arguments.source"),
        C(
            "InNestedValue", [](json& t) { Args(t, 1)["env"]["LABEL"] = "${steps.second.status}"; },
            "steps[1].arguments.env.LABEL"),
        C(
            "InCodexExecArguments",
            [](json& t) {
              t["steps"][1] = {{"id", "c"},
                               {"tool", "codex_exec"},
                               {"arguments", {{"prompt", json::array({"${steps.c.stdout}"})}}}};
            },
            "steps[1].arguments.prompt[0]")),
    [](const ::testing::TestParamInfo<TreeCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Expect, TreeRejection,
    ::testing::Values(
        C(
            "NotMapping", [](json& t) { Step(t, 0)["expect"] = "ok"; }, "steps[0].expect"),
        C(
            "NoChecks", [](json& t) { Step(t, 0)["expect"] = json::object(); }, "steps[0].expect"),
        C(
            "UnknownCheck", [](json& t) { Step(t, 0)["expect"]["matches"] = "x"; },
            "steps[0].expect.matches"),
        C(
            "EqualsEmpty", [](json& t) { Step(t, 0)["expect"]["equals"] = json::object(); },
            "steps[0].expect.equals"),
        C(
            "EqualsNotMapping", [](json& t) { Step(t, 0)["expect"]["equals"] = "status"; },
            "steps[0].expect.equals"),
        C(
            "EqualsBadFieldName",
            [](json& t) {
              Step(t, 0)["expect"]["equals"] = {{"Status", 1}};
            },
            "steps[0].expect.equals.Status"),
        C(
            "EqualsNonScalar",
            [](json& t) {
              Step(t, 0)["expect"]["equals"] = {{"status", json::array()}};
            },
            "steps[0].expect.equals.status"),
        C(
            "TrimmedOutputNotString",
            [](json& t) { Step(t, 0)["expect"]["trimmed_output_equals"] = 42; },
            "steps[0].expect.trimmed_output_equals"),
        C(
            "ExitCodeNotInteger", [](json& t) { Step(t, 0)["expect"]["exit_code"] = "0"; },
            "steps[0].expect.exit_code"),
        C(
            "ExitCodeOutOfRange", [](json& t) { Step(t, 0)["expect"]["exit_code"] = 1LL << 40; },
            "steps[0].expect.exit_code"),
        C(
            "NonEmptyEmpty", [](json& t) { Step(t, 0)["expect"]["non_empty"] = json::array(); },
            "steps[0].expect.non_empty"),
        C(
            "NonEmptyBadName",
            [](json& t) {
              Step(t, 0)["expect"]["non_empty"] = json::array({"stdout", "a b"});
            },
            "steps[0].expect.non_empty[1]")),
    [](const ::testing::TestParamInfo<TreeCase>& info) { return info.param.name; });

}  // namespace
}  // namespace aevatar::orchestrator
