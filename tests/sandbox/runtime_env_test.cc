#include "sandbox/runtime_env.h"

#include <filesystem>

#include "base/api_error.h"
#include "gtest/gtest.h"
#include "sandbox/runtime.h"
#include "testing/runtime_roots.h"

namespace aevatar::sandbox {
namespace {

using ::aevatar::testing::TestRuntimeRoot;

TEST(RuntimeFlag, ParsesNameLanguageAndRoot) {
  auto env = ParseRuntimeFlag("python-data=python:/var/lib/x:y");
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->name, "python-data");
  EXPECT_EQ(env->language, Language::kPython);
  EXPECT_EQ(env->root, "/var/lib/x:y");  // the root keeps any further ':'
}

TEST(RuntimeFlag, RootIsRequiredUnlessOnlyAdvertised) {
  EXPECT_FALSE(ParseRuntimeFlag("node-libs=javascript").ok());
  auto advertised = ParseRuntimeFlag("node-libs=javascript", /*root_required=*/false);
  ASSERT_TRUE(advertised.ok());
  EXPECT_EQ(advertised->language, Language::kJavaScript);
  EXPECT_TRUE(advertised->root.empty());
}

TEST(RuntimeFlag, RefusesMalformedValues) {
  for (const char* bad : {"", "python", "=python:/r", "Bad=python:/r", "a b=python:/r",
                          "-x=python:/r", "x=cobol:/r", "x=:/r"}) {
    EXPECT_EQ(ParseRuntimeFlag(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ValidateRuntimeName(std::string(65, 'a')).ok());
  EXPECT_TRUE(ValidateRuntimeName(std::string(64, 'a')).ok());
  EXPECT_TRUE(ValidateRuntimeName("py3.11_data-x").ok());
}

TEST(ResolveRuntime, DefaultUnknownAndWrongLanguageAreDistinct) {
  const std::vector<RuntimeEnv> runtimes = {{"data", Language::kPython, "/srv/data"}};
  auto none = ResolveRuntime(runtimes, Language::kPython, "");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  auto found = ResolveRuntime(runtimes, Language::kPython, "data");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, &runtimes[0]);

  auto unknown = ResolveRuntime(runtimes, Language::kPython, "nope");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(base::ApiCode(unknown.status()), "UNKNOWN_RUNTIME");
  EXPECT_EQ(unknown.status().message().find("nope"), std::string::npos) << "echoes the value";

  auto mismatch = ResolveRuntime(runtimes, Language::kBash, "data");
  EXPECT_EQ(base::ApiCode(mismatch.status()), "RUNTIME_LANGUAGE_MISMATCH");
  EXPECT_EQ(mismatch.status().message().find("/srv/data"), std::string::npos)
      << "names a host path";
}

TEST(CheckRuntimeRoot, AcceptsEachLanguagesLayout) {
  for (Language language :
       {Language::kPython, Language::kJavaScript, Language::kTypeScript, Language::kBash}) {
    TestRuntimeRoot root("layout", language);
    EXPECT_TRUE(CheckRuntimeRoot(root.env()).ok()) << CheckRuntimeRoot(root.env());
  }
}

TEST(CheckRuntimeRoot, RefusesWhatTheSandboxCannotUseSafely) {
  TestRuntimeRoot root("refused", Language::kPython);
  RuntimeEnv env = root.env();
  env.language = Language::kBash;  // its bin/ makes it a usable bash root too
  EXPECT_TRUE(CheckRuntimeRoot(env).ok());
  env.language = Language::kJavaScript;
  EXPECT_EQ(CheckRuntimeRoot(env).code(), absl::StatusCode::kFailedPrecondition);
  for (const char* path : {"relative/dir", "/tmp/runtime", "/nonexistent/runtime"}) {
    RuntimeEnv elsewhere{"x", Language::kPython, path};
    EXPECT_EQ(CheckRuntimeRoot(elsewhere).code(), absl::StatusCode::kFailedPrecondition) << path;
  }
  std::filesystem::permissions(root.root(), std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  EXPECT_EQ(CheckRuntimeRoot(root.env()).code(), absl::StatusCode::kFailedPrecondition)
      << "a root others may write to";
}

TEST(CheckRuntimes, RefusesDuplicateNames) {
  TestRuntimeRoot root("dup", Language::kPython);
  EXPECT_TRUE(CheckRuntimes({root.env()}).ok());
  EXPECT_EQ(CheckRuntimes({root.env(), root.env()}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(PlanRuntime, APythonRuntimeRunsItsOwnInterpreterIsolated) {
  const RuntimeEnv env{"data", Language::kPython, "/srv/data"};
  RuntimePlan plan = PlanRuntime(Language::kPython, &env);
  ASSERT_EQ(plan.stages.size(), 1u);
  EXPECT_EQ(plan.stages[0].path, "/opt/runtimes/data/bin/python3");
  // argv[0] is the full path: Python finds pyvenv.cfg from it.
  EXPECT_EQ(plan.stages[0].argv[0], plan.stages[0].path);
  EXPECT_EQ(plan.stages[0].argv[1], "-I");
  EXPECT_EQ(plan.layout.host_root, "/srv/data");
  EXPECT_EQ(plan.layout.sandbox_dir, "/opt/runtimes/data");
  EXPECT_TRUE(plan.layout.links.empty());
}

TEST(PlanRuntime, NodeRuntimesLinkNodeModulesAndTheDefaultMountsNothing) {
  const RuntimeEnv env{"web", Language::kTypeScript, "/srv/web"};
  RuntimePlan plan = PlanRuntime(Language::kTypeScript, &env);
  ASSERT_EQ(plan.layout.links.size(), 1u);
  EXPECT_EQ(plan.layout.links[0].path, "/node_modules");
  EXPECT_EQ(plan.layout.links[0].target, "/opt/runtimes/web/node_modules");
  EXPECT_EQ(plan.stages.back().path, "/usr/bin/node");
  RuntimePlan plain = PlanRuntime(Language::kTypeScript);
  EXPECT_TRUE(plain.layout.host_root.empty());
  EXPECT_TRUE(plain.layout.links.empty());
}

TEST(BuildProgramEnv, ABashRuntimesBinComesFirstOnPath) {
  const RuntimeEnv env{"tools", Language::kBash, "/srv/tools"};
  RunSpec spec;
  spec.language = Language::kBash;
  std::vector<std::string> vars = BuildProgramEnv(spec, &env);
  EXPECT_NE(std::find(vars.begin(), vars.end(),
                      "PATH=/opt/runtimes/tools/bin:/usr/local/bin:/usr/bin:/bin"),
            vars.end());
}

TEST(HiddenLibraryDirs, NamesOnlyExistingThirdPartyPythonDirs) {
  for (const std::string& dir : HiddenLibraryDirs()) {
    EXPECT_TRUE(std::filesystem::is_directory(dir)) << dir;
    const bool packages = dir.ends_with("/dist-packages") || dir.ends_with("/site-packages");
    EXPECT_TRUE(packages && (dir.rfind("/usr/lib/python3", 0) == 0 ||
                             dir.rfind("/usr/local/lib/python3", 0) == 0))
        << dir;
  }
}

}  // namespace
}  // namespace aevatar::sandbox
