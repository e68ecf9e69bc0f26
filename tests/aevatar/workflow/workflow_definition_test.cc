// Parsing and validating workflows: the bundled skill, canonical JSON and
// digest, and every schema rule.
#include "aevatar/workflow/workflow_definition.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "aevatar/workflow/workflow_template.h"
#include "base/api_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workflow_test_util.h"

namespace aevatar::orchestrator {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using wftest::BundledDurableCheckYaml;
using wftest::MustParse;
using wftest::ValidTree;

TEST(ParseWorkflowYaml, ParsesTheBundledDurableCheck) {
  WorkflowDefinition def = MustParse(BundledDurableCheckYaml());
  EXPECT_EQ(def.workflow_id, "code-execute-durable-check");
  ASSERT_EQ(def.inputs.size(), 1u);
  EXPECT_EQ(def.inputs[0].name, "seconds");
  EXPECT_EQ(def.inputs[0].type, "integer");
  EXPECT_EQ(def.inputs[0].default_value, json(130));
  ASSERT_EQ(def.steps.size(), 1u);
  const WorkflowStep& step = def.steps[0];
  EXPECT_EQ(step.id, "durable_sleep");
  EXPECT_EQ(step.tool, "code_execute");
  EXPECT_EQ(step.arguments["language"], "python");
  EXPECT_EQ(step.arguments["timeout_secs"], 180);
  EXPECT_THAT(step.arguments["source"].get<std::string>(), HasSubstr("${inputs.seconds}"));
  EXPECT_THAT(step.arguments["source"].get<std::string>(), HasSubstr("AEVATAR_DURABLE_GT125_OK"));
  EXPECT_EQ(step.timeout_ms, 180 * 1000 + 60'000);
  ASSERT_TRUE(step.expect.has_value());
  EXPECT_EQ(step.expect->equals.at("status"), "succeeded");
  EXPECT_EQ(step.expect->equals.at("exit_code"), 0);
  EXPECT_EQ(step.expect->trimmed_output_equals, "AEVATAR_DURABLE_GT125_OK");
  EXPECT_THAT(def.digest, MatchesRegex("sha256:[0-9a-f]{64}"));
}

// The example in docs/workflows.md stays valid.
TEST(ParseWorkflowYaml, ParsesTheDocumentedExample) {
  std::ifstream in(std::filesystem::path(AEVATAR_SOURCE_DIR) / "docs/workflows.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const size_t start = text.find("```yaml\n");
  ASSERT_NE(start, std::string::npos);
  const size_t end = text.find("```", start + 8);
  WorkflowDefinition def = MustParse(text.substr(start + 8, end - start - 8));
  ASSERT_EQ(def.steps.size(), 2u);
  EXPECT_EQ(def.steps[0].timeout_ms, 90'000);
  auto inputs = BindInputs(def, {{"who", "ada"}, {"shout", "true"}});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  auto rendered =
      RenderStepArguments(def.steps[1], *inputs, {{"greet", {{"stdout", "HELLO ADA\n"}}}});
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  EXPECT_EQ((*rendered)["stdin"], "HELLO ADA");
  EXPECT_THAT((*rendered)["source"].get<std::string>(), HasSubstr("echo \"${#line}\""));
}

TEST(ParseWorkflowYaml, FillsDefaultsExplicitly) {
  json tree = ValidTree();
  WorkflowDefinition def = MustParse(tree.dump());
  // The spec's default (sandbox-execution.md: 180 s), not the constant under test.
  EXPECT_EQ(def.steps[0].arguments["timeout_secs"], 180);
  EXPECT_EQ(def.steps[0].timeout_ms, 240'000);
  EXPECT_EQ(def.steps[1].timeout_ms, 20'000);
  EXPECT_FALSE(def.inputs[1].default_value.has_value());
}

TEST(ParseWorkflowYaml, TemplatedTimeoutSecsDefaultsTheStepToTheMaximum) {
  json tree = ValidTree();
  tree["steps"][0]["arguments"]["timeout_secs"] = "${inputs.seconds}";
  WorkflowDefinition def = MustParse(tree.dump());
  EXPECT_EQ(def.steps[0].timeout_ms, 600 * 1000 + 60'000);
}

TEST(ParseWorkflowYaml, CodexExecStepDefaultsToTheCanaryBudget) {
  json tree = ValidTree();
  tree["steps"][1] = {{"id", "codex"},
                      {"tool", "codex_exec"},
                      {"arguments", {{"target", {{"kind", "managed_sandbox"}}}, {"prompt", "hi"}}}};
  WorkflowDefinition def = MustParse(tree.dump());
  EXPECT_EQ(def.steps[1].timeout_ms, 360'000);  // the spec's canary step budget
}

// The spec's range is 1 through 600 seconds inclusive (0 and 601 are refused
// in workflow_validation_test.cc).
TEST(ParseWorkflowYaml, AcceptsTimeoutSecsAtBothEndsOfTheSpecsRange) {
  for (int secs : {1, 600}) {
    SCOPED_TRACE(secs);
    json tree = ValidTree();
    tree["steps"][0]["arguments"]["timeout_secs"] = secs;
    WorkflowDefinition def = MustParse(tree.dump());
    EXPECT_EQ(def.steps[0].arguments["timeout_secs"], secs);
    EXPECT_EQ(def.steps[0].timeout_ms, secs * 1000 + 60'000);
  }
}

TEST(ParseWorkflowYaml, ResolvesPlainScalarsByTheCoreSchema) {
  const char* yaml = R"wf(
workflow_id: scalars
inputs:
  - {name: a, type: integer, default: -7}
  - {name: b, type: boolean, default: True}
  - {name: c, type: string, default: "130"}
  - {name: d, type: string, default: !!str 42}
steps:
  - id: s
    tool: codex_exec
    arguments: {f: 1.5, n: ~, t: yes, e: 1e3}
)wf";
  WorkflowDefinition def = MustParse(yaml);
  EXPECT_EQ(def.inputs[0].default_value, json(-7));
  EXPECT_EQ(def.inputs[1].default_value, json(true));
  EXPECT_EQ(def.inputs[2].default_value, json("130"));
  EXPECT_EQ(def.inputs[3].default_value, json("42"));
  EXPECT_EQ(def.steps[0].arguments["f"], 1.5);
  EXPECT_TRUE(def.steps[0].arguments["n"].is_null());
  EXPECT_EQ(def.steps[0].arguments["t"], "yes");  // YAML 1.2: not a boolean
  EXPECT_EQ(def.steps[0].arguments["e"], 1000.0);
}

TEST(WorkflowJson, RoundTripsThroughTheCanonicalForm) {
  WorkflowDefinition def = MustParse(BundledDurableCheckYaml());
  json canonical = WorkflowToJson(def);
  EXPECT_EQ(canonical["digest"], def.digest);
  auto again = WorkflowFromJson(canonical);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(WorkflowToJson(*again), canonical);
  EXPECT_EQ(again->digest, def.digest);
}

TEST(WorkflowJson, AcceptsAJsonTreeWithoutDigest) {
  auto def = WorkflowFromJson(ValidTree());
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->digest, MustParse(ValidTree().dump()).digest);
}

TEST(WorkflowJson, RejectsATamperedDigest) {
  json canonical = WorkflowToJson(MustParse(BundledDurableCheckYaml()));
  canonical["steps"][0]["arguments"]["timeout_secs"] = 170;
  auto def = WorkflowFromJson(canonical);
  ASSERT_FALSE(def.ok());
  EXPECT_EQ(base::ApiCode(def.status()), "WORKFLOW_INVALID");
  EXPECT_THAT(def.status().message(), HasSubstr("digest"));
}

TEST(WorkflowDigest, StableAcrossKeyOrderFormattingQuotingAndWrittenDefaults) {
  const std::string a = R"wf(
workflow_id: same
steps:
  - id: one
    tool: code_execute
    arguments: {language: python, source: "print(1)"}
)wf";
  const std::string b = R"wf(# a comment
steps:
- tool: 'code_execute'
  arguments:
    source: 'print(1)'
    timeout_secs: 180
    language: "python"
  id: one
  timeout_ms: 240000
description: ""
inputs: []
workflow_id: "same"
)wf";
  EXPECT_EQ(MustParse(a).digest, MustParse(b).digest);
  EXPECT_EQ(MustParse(a).digest, WorkflowFromJson(WorkflowToJson(MustParse(b)))->digest);
}

TEST(WorkflowDigest, ChangesWithContent) {
  const std::string base_digest = MustParse(ValidTree().dump()).digest;
  auto digest_after = [](auto mutate) {
    json tree = ValidTree();
    mutate(tree);
    return MustParse(tree.dump()).digest;
  };
  EXPECT_NE(base_digest, digest_after([](json& t) { t["steps"][0]["arguments"]["source"] = "x"; }));
  EXPECT_NE(base_digest, digest_after([](json& t) { t["steps"][1]["timeout_ms"] = 20'001; }));
  EXPECT_NE(base_digest, digest_after([](json& t) { t["inputs"][0]["default"] = 6; }));
  EXPECT_NE(base_digest, digest_after([](json& t) { t["steps"][0]["expect"]["exit_code"] = 1; }));
  EXPECT_NE(base_digest, digest_after([](json& t) { t["description"] = "other"; }));
}

TEST(ParseWorkflowYaml, ErrorsNeverEchoWorkflowText) {
  const std::string marker = "PLANTED_MARKER_7f3a";
  for (const std::string& yaml : {
           "workflow_id: x\nsteps: [" + marker + ": {",
           // Keys are shown in paths only when they are plain names.
           "workflow_id: x\n'" + marker + " x': 1\nsteps: []",
           "workflow_id: x\nsteps:\n  - {id: a, tool: code_execute, arguments: {language: " +
               marker + ", source: s}}",
           "workflow_id: x\nsteps:\n  - {id: a, tool: code_execute, arguments: {language: "
           "python, source: '${" +
               marker + "}'}}",
           "workflow_id: " + marker + "!\nsteps: []",
       }) {
    auto def = ParseWorkflowYaml(yaml);
    ASSERT_FALSE(def.ok());
    EXPECT_THAT(std::string(def.status().message()), ::testing::Not(HasSubstr(marker)));
  }
}

TEST(ParseWorkflowYaml, ReportsTheSyntaxErrorPosition) {
  auto def = ParseWorkflowYaml("workflow_id: x\nsteps: [1, 2\n");
  ASSERT_FALSE(def.ok());
  EXPECT_EQ(base::ApiCode(def.status()), "WORKFLOW_INVALID");
  EXPECT_THAT(def.status().message(), HasSubstr("YAML syntax error at line"));
}

// YAML-level rules: the text, before it is a tree.
struct YamlCase {
  std::string name;
  std::string yaml;
  std::string detail;
};
// gtest prints a parameter by this (the test name), not as raw bytes.
void PrintTo(const YamlCase& c, std::ostream* os) { *os << c.name; }

class YamlRejection : public ::testing::TestWithParam<YamlCase> {};

TEST_P(YamlRejection, IsWorkflowInvalid) {
  auto def = ParseWorkflowYaml(GetParam().yaml);
  ASSERT_FALSE(def.ok());
  EXPECT_EQ(base::ApiCode(def.status()), "WORKFLOW_INVALID") << def.status();
  EXPECT_THAT(std::string(def.status().message()), HasSubstr(GetParam().detail));
}

std::string Nested(int depth) {
  std::string yaml = "workflow_id: x\nsteps: ";
  for (int i = 0; i < depth; ++i) yaml += "[";
  for (int i = 0; i < depth; ++i) yaml += "]";
  return yaml;
}

std::string Laughs() {
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 6; ++i) {
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) yaml += (j ? ", *a" : "*a") + std::to_string(i - 1);
    yaml += "]\n";
  }
  return yaml;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, YamlRejection,
    ::testing::Values(
        YamlCase{"Syntax", "a: [", "YAML syntax error"},
        YamlCase{"Empty", "", "exactly one document"},
        YamlCase{"TwoDocuments", "workflow_id: a\n---\nworkflow_id: b\n", "exactly one document"},
        // yaml-cpp's LoadAll never returned on these: it made empty documents
        // until aevatar ran out of memory (tests/fuzz found the two bytes).
        YamlCase{"TopLevelFlowEntry", ",a", "exactly one document"},
        YamlCase{"TopLevelFlowEntryAfterNewline", "\n,\n", "exactly one document"},
        YamlCase{"TooLarge", std::string(kMaxWorkflowYamlBytes + 1, '#'), "exceeds"},
        YamlCase{"NotAMapping", "[1, 2]", "must be a mapping"},
        YamlCase{"DuplicateKey", "workflow_id: a\nworkflow_id: b\n", "workflow_id: duplicate key"},
        YamlCase{"NonScalarKey", "? [a]\n: 1\n", "mapping keys must be scalars"},
        YamlCase{"UnsupportedTag", "workflow_id: !!binary aGk=\n", "unsupported YAML tag"},
        YamlCase{"BadIntTag", "workflow_id: !!int abc\n", "!!int value is not an integer"},
        YamlCase{"IntegerOutOfRange", "workflow_id: 99999999999999999999\n",
                 "integer out of range"},
        YamlCase{"NonFinite", "workflow_id: .inf\n", "non-finite"},
        YamlCase{"TooDeep", Nested(40), "nested too deeply"},
        YamlCase{"AliasExpansion", Laughs(), "too many YAML nodes"},
        YamlCase{"DigestInYaml", "digest: sha256:00\nworkflow_id: a\n", "digest: unknown field"},
        YamlCase{"InvalidUtf8",
                 "workflow_id: a\ndescription: \"\xff\xfe\"\nsteps:\n  - {id: a, tool: "
                 "codex_exec, arguments: {}}\n",
                 "valid UTF-8"}),
    [](const ::testing::TestParamInfo<YamlCase>& info) { return info.param.name; });

}  // namespace
}  // namespace aevatar::orchestrator
