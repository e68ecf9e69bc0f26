#include "sandbox/runtime.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace aevatar::sandbox {
namespace {

TEST(PlanRuntime, SourceIsAFileNeverACommandLine) {
  for (Language language :
       {Language::kPython, Language::kJavaScript, Language::kTypeScript, Language::kBash}) {
    RuntimePlan plan = PlanRuntime(language);
    EXPECT_EQ(plan.source_path.rfind("/workspace/", 0), 0u);
    for (const RuntimeStage& stage : plan.stages) {
      EXPECT_EQ(stage.path.front(), '/');
      for (const std::string& arg : stage.argv) {
        EXPECT_NE(arg, "-c");
        EXPECT_NE(arg, "-e");
      }
    }
  }
}

TEST(PlanRuntime, PythonRunsIsolated) {
  RuntimePlan plan = PlanRuntime(Language::kPython);
  ASSERT_EQ(plan.stages.size(), 1u);
  EXPECT_EQ(plan.stages[0].path, "/usr/bin/python3");
  EXPECT_EQ(plan.stages[0].argv[1], "-I");
}

TEST(PlanRuntime, TypeScriptCompilesWithEsbuildThenRunsNode) {
  RuntimePlan plan = PlanRuntime(Language::kTypeScript);
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[0].path, "/usr/bin/esbuild");
  EXPECT_EQ(plan.stages[1].path, "/usr/bin/node");
}

TEST(BuildProgramEnv, BaselineThenCallerThenServer) {
  RunSpec spec;
  spec.env = {{"PATH", "/caller"}, {"FOO", "1"}};
  spec.server_env = {{"NYXID_API_KEY", "k"}};
  std::vector<std::string> env = BuildProgramEnv(spec);
  auto has = [&](const std::string& kv) {
    return std::find(env.begin(), env.end(), kv) != env.end();
  };
  EXPECT_TRUE(has("PATH=/caller"));
  EXPECT_TRUE(has("FOO=1"));
  EXPECT_TRUE(has("NYXID_API_KEY=k"));
  EXPECT_TRUE(has("HOME=/workspace"));
  EXPECT_TRUE(has("TMPDIR=/tmp"));
}

TEST(LanguageNames, RoundTrip) {
  for (const char* name : {"python", "javascript", "typescript", "bash"}) {
    auto language = ParseLanguage(name);
    ASSERT_TRUE(language.has_value()) << name;
    EXPECT_EQ(LanguageName(*language), name);
  }
  EXPECT_FALSE(ParseLanguage("ruby").has_value());
  EXPECT_FALSE(ParseLanguage("Python").has_value());
}

}  // namespace
}  // namespace aevatar::sandbox
