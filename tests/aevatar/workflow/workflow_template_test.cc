// Scanning ${...} templates and rendering step arguments for a run.
#include "aevatar/workflow/workflow_template.h"

#include <string>

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
using wftest::BundledDurableCheckYaml;
using wftest::MustParse;

constexpr char kArgsInvalid[] = "WORKFLOW_ARGUMENTS_INVALID";

WorkflowStep CodeStep(json arguments, int64_t timeout_ms = 240'000) {
  WorkflowStep step;
  step.id = "run";
  step.tool = "code_execute";
  step.arguments = std::move(arguments);
  step.timeout_ms = timeout_ms;
  return step;
}

json Outputs() {
  return {{"first",
           {{"stdout", "  42\n"},
            {"stderr", ""},
            {"exit_code", 0},
            {"status", "succeeded"},
            {"trimmed_output", "42"}}}};
}

TEST(ParseTemplateString, SplitsLiteralsAndReferences) {
  auto pieces = ParseTemplateString("a ${inputs.x} b ${ steps.s-1.exit_code }", "p");
  ASSERT_TRUE(pieces.ok()) << pieces.status();
  ASSERT_EQ(pieces->size(), 4u);
  EXPECT_EQ((*pieces)[0].literal, "a ");
  EXPECT_EQ((*pieces)[1].ref->kind, TemplateRef::Kind::kInput);
  EXPECT_EQ((*pieces)[1].ref->name, "x");
  EXPECT_EQ((*pieces)[2].literal, " b ");
  EXPECT_EQ((*pieces)[3].ref->kind, TemplateRef::Kind::kStepOutput);
  EXPECT_EQ((*pieces)[3].ref->name, "s-1");
  EXPECT_EQ((*pieces)[3].ref->field, "exit_code");
  EXPECT_FALSE(IsSingleTemplate(*pieces));
}

TEST(ParseTemplateString, DoubleDollarEscapesALiteral) {
  auto pieces = ParseTemplateString("echo $${HOME} $$ $x", "p");
  ASSERT_TRUE(pieces.ok()) << pieces.status();
  ASSERT_EQ(pieces->size(), 1u);
  EXPECT_EQ((*pieces)[0].literal, "echo ${HOME} $$ $x");
}

TEST(ParseTemplateString, ExactlyOneTemplateIsSingle) {
  auto single = ParseTemplateString("${inputs.t}", "p");
  ASSERT_TRUE(single.ok());
  EXPECT_TRUE(IsSingleTemplate(*single));
  auto spaced = ParseTemplateString(" ${inputs.t}", "p");
  ASSERT_TRUE(spaced.ok());
  EXPECT_FALSE(IsSingleTemplate(*spaced));
}

TEST(ParseTemplateString, RejectsMalformedReferencesAtThePath) {
  for (const char* text : {"${", "${inputs.x", "${}", "${inputs}", "${inputs.a.b.c}", "${steps.s}",
                           "${steps.s.output}", "${steps.S.stdout}", "${HOME}", "${inputs.a-b}"}) {
    auto pieces = ParseTemplateString(text, "steps[0].arguments.source");
    ASSERT_FALSE(pieces.ok()) << text;
    EXPECT_EQ(base::ApiCode(pieces.status()), "WORKFLOW_INVALID");
    EXPECT_THAT(std::string(pieces.status().message()), StartsWith("steps[0].arguments.source:"));
  }
}

TEST(RenderStepArguments, ASingleTemplateTakesTheValuesJsonType) {
  WorkflowStep step = CodeStep({{"language", "${inputs.lang}"},
                                {"source", "print(1)"},
                                {"timeout_secs", "${inputs.t}"},
                                {"stdin", "${steps.first.exit_code}"}});
  step.tool = "codex_exec";  // no code_execute contract: stdin may become a number here
  auto rendered = RenderStepArguments(step, {{"lang", "bash"}, {"t", 130}}, Outputs());
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  EXPECT_EQ((*rendered)["timeout_secs"], json(130));
  EXPECT_TRUE((*rendered)["timeout_secs"].is_number_integer());
  EXPECT_EQ((*rendered)["language"], "bash");
  EXPECT_EQ((*rendered)["stdin"], json(0));
}

TEST(RenderStepArguments, AMemberOfAJsonObjectInputIsItsStringMember) {
  WorkflowStep step =
      CodeStep({{"service", "${inputs.p.service}"}, {"who", "as ${inputs.p.principal}"}});
  step.tool = "codex_exec";
  auto rendered =
      RenderStepArguments(step, {{"p", R"({"service":"box","principal":"alice"})"}}, Outputs());
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  EXPECT_EQ((*rendered)["service"], "box");
  EXPECT_EQ((*rendered)["who"], "as alice");
  // Not JSON object text, no such member, or not a string: a typed error
  // naming the input and member, never its value.
  for (const json& input : {json("not json"), json(R"({"principal":"alice"})"),
                            json(R"({"service":7})"), json(42), json(R"(["box"])")}) {
    auto bad = RenderStepArguments(step, {{"p", input}}, Outputs());
    ASSERT_FALSE(bad.ok()) << input;
    EXPECT_EQ(base::ApiCode(bad.status()), "WORKFLOW_ARGUMENTS_INVALID");
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr("member 'service'"));
  }
}

TEST(RenderStepArguments, MixedTextSubstitutesValuesAsText) {
  WorkflowStep step = CodeStep({{"language", "python"},
                                {"source",
                                 "n=${inputs.n} b=${inputs.b} z=${inputs.z}! "
                                 "o=${steps.first.trimmed_output} c=${steps.first.exit_code}"},
                                {"timeout_secs", 180}});
  auto rendered = RenderStepArguments(step, {{"n", 130}, {"b", true}, {"z", nullptr}}, Outputs());
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  EXPECT_EQ((*rendered)["source"], "n=130 b=true z=! o=42 c=0");
}

TEST(RenderStepArguments, EscapesBecomeLiteralAndKeysAreNotRendered) {
  WorkflowStep step = CodeStep({{"language", "bash"},
                                {"source", "echo $${HOME}"},
                                {"timeout_secs", 5},
                                {"env", {{"X", "${inputs.n}"}}}});
  auto rendered = RenderStepArguments(step, {{"n", "v"}}, json::object());
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  EXPECT_EQ((*rendered)["source"], "echo ${HOME}");
  EXPECT_EQ((*rendered)["env"], json({{"X", "v"}}));
}

TEST(RenderStepArguments, TrimmedOutputFallsBackToTrimmedStdout) {
  WorkflowStep step = CodeStep(
      {{"language", "python"}, {"source", "[${steps.first.trimmed_output}]"}, {"timeout_secs", 5}});
  auto rendered = RenderStepArguments(step, json::object(), {{"first", {{"stdout", "\t hi \n"}}}});
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  EXPECT_EQ((*rendered)["source"], "[hi]");
}

TEST(RenderStepArguments, RendersNestedArraysAndObjects) {
  WorkflowStep step;
  step.id = "codex";
  step.tool = "codex_exec";
  step.arguments = {{"list", {"${inputs.a}", {{"k", "x${inputs.a}"}}}}};
  auto rendered = RenderStepArguments(step, {{"a", 1}}, json::object());
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  EXPECT_EQ((*rendered)["list"], json::parse(R"wf([1, {"k": "x1"}])wf"));
}

TEST(RenderStepArguments, RendersTheBundledDurableCheck) {
  WorkflowDefinition def = MustParse(BundledDurableCheckYaml());
  auto inputs = BindInputs(def, {{"seconds", "3"}});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  auto rendered = RenderStepArguments(def.steps[0], *inputs, json::object());
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  EXPECT_THAT((*rendered)["source"].get<std::string>(), HasSubstr("time.sleep(3)\n"));
  EXPECT_EQ((*rendered)["timeout_secs"], 180);
  EXPECT_EQ((*rendered)["language"], "python");
}

struct RenderCase {
  std::string name;
  json arguments;
  json inputs;
  json outputs;
  std::string path;
  int64_t timeout_ms = 240'000;
};
// gtest prints a parameter by this (the test name), not as raw bytes.
void PrintTo(const RenderCase& c, std::ostream* os) { *os << c.name; }

class RenderRejection : public ::testing::TestWithParam<RenderCase> {};

TEST_P(RenderRejection, IsArgumentsInvalidAtThePath) {
  const RenderCase& c = GetParam();
  auto rendered = RenderStepArguments(CodeStep(c.arguments, c.timeout_ms), c.inputs, c.outputs);
  ASSERT_FALSE(rendered.ok());
  EXPECT_EQ(base::ApiCode(rendered.status()), kArgsInvalid) << rendered.status();
  EXPECT_THAT(std::string(rendered.status().message()), StartsWith(c.path + ":"));
  EXPECT_THAT(std::string(rendered.status().message()), Not(HasSubstr("SECRET_VALUE")));
}

json Args(json language, json source, json timeout) {
  return {{"language", language}, {"source", source}, {"timeout_secs", timeout}};
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RenderRejection,
    ::testing::Values(RenderCase{"InputNotBound", Args("python", "${inputs.x}", 5), json::object(),
                                 json::object(), "steps.run.arguments.source"},
                      RenderCase{"StepOutputNotAvailable",
                                 Args("python", "${steps.first.stdout}", 5), json::object(),
                                 json::object(), "steps.run.arguments.source"},
                      RenderCase{"StepFieldNotAvailable",
                                 Args("python", "${steps.first.stderr}", 5),
                                 json::object(),
                                 {{"first", {{"stdout", "x"}}}},
                                 "steps.run.arguments.source"},
                      RenderCase{"LanguageRendersUnknown",
                                 Args("${inputs.l}", "x", 5),
                                 {{"l", "SECRET_VALUE"}},
                                 json::object(),
                                 "steps.run.arguments.language"},
                      RenderCase{"LanguageRendersNonString",
                                 Args("${inputs.l}", "x", 5),
                                 {{"l", 1}},
                                 json::object(),
                                 "steps.run.arguments.language"},
                      RenderCase{"SourceRendersEmpty",
                                 Args("python", "${inputs.s}", 5),
                                 {{"s", ""}},
                                 json::object(),
                                 "steps.run.arguments.source"},
                      RenderCase{"TimeoutRendersAboveMax",
                                 Args("python", "x", "${inputs.t}"),
                                 {{"t", 601}},
                                 json::object(),
                                 "steps.run.arguments.timeout_secs"},
                      RenderCase{"TimeoutRendersZero",
                                 Args("python", "x", "${inputs.t}"),
                                 {{"t", 0}},
                                 json::object(),
                                 "steps.run.arguments.timeout_secs"},
                      RenderCase{"TimeoutRendersString",
                                 Args("python", "x", "${steps.first.trimmed_output}"),
                                 json::object(), Outputs(), "steps.run.arguments.timeout_secs"},
                      RenderCase{"TimeoutRendersNotBelowStepTimeout",
                                 Args("python", "x", "${inputs.t}"),
                                 {{"t", 600}},
                                 json::object(),
                                 "steps.run.arguments.timeout_secs",
                                 600'000},
                      RenderCase{"RendersInvalidUtf8",
                                 Args("python", "print('${steps.first.stdout}')", 5),
                                 json::object(),
                                 {{"first", {{"stdout", "\xff\xfe"}}}},
                                 "steps.run.arguments"},
                      RenderCase{"EnvValueRendersNonString",
                                 {{"language", "python"},
                                  {"source", "x"},
                                  {"timeout_secs", 5},
                                  {"env", {{"N", "${inputs.n}"}}}},
                                 {{"n", 3}},
                                 json::object(),
                                 "steps.run.arguments.env.N"}),
    [](const ::testing::TestParamInfo<RenderCase>& info) { return info.param.name; });

}  // namespace
}  // namespace aevatar::orchestrator
