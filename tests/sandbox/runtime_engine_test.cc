// Runtime environments on the real engine (native backend): a chosen
// runtime's libraries load, its root is read-only, and the default runtime
// of each language sees neither it nor the host's third-party libraries.
#include <filesystem>
#include <memory>
#include <string>

#include "base/api_error.h"
#include "gtest/gtest.h"
#include "sandbox/engine.h"
#include "testing/runtime_roots.h"

namespace aevatar::sandbox {
namespace {

using ::aevatar::testing::kPythonDataRoot;
using ::aevatar::testing::TestRuntimeRoot;

class RuntimeEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    python_ = new TestRuntimeRoot("probe-py", Language::kPython);
    node_ = new TestRuntimeRoot("probe-js", Language::kJavaScript);
    ts_ = new TestRuntimeRoot("probe-ts", Language::kTypeScript);
    bash_ = new TestRuntimeRoot("probe-sh", Language::kBash);
    EngineOptions options;
    options.runtimes = {python_->env(), node_->env(), ts_->env(), bash_->env()};
    if (testing::PythonDataRootProblem().empty()) {
      options.runtimes.push_back({"python-data", Language::kPython, kPythonDataRoot});
    }
    auto engine = Engine::Create(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine).release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    for (TestRuntimeRoot* root : {python_, node_, ts_, bash_}) delete root;
  }

  static absl::StatusOr<RunResult> Run(Language language, std::string source,
                                       std::string runtime = "") {
    RunSpec spec;
    spec.language = language;
    spec.source = std::move(source);
    spec.runtime = std::move(runtime);
    spec.limits.wall_timeout_secs = 60;
    return engine_->Run(spec);
  }

  static Engine* engine_;
  static TestRuntimeRoot* python_;
  static TestRuntimeRoot* node_;
  static TestRuntimeRoot* ts_;
  static TestRuntimeRoot* bash_;
};

Engine* RuntimeEngineTest::engine_ = nullptr;
TestRuntimeRoot* RuntimeEngineTest::python_ = nullptr;
TestRuntimeRoot* RuntimeEngineTest::node_ = nullptr;
TestRuntimeRoot* RuntimeEngineTest::ts_ = nullptr;
TestRuntimeRoot* RuntimeEngineTest::bash_ = nullptr;

constexpr char kProbeLine[] = "probe library loaded\n";

TEST_F(RuntimeEngineTest, EachLanguageLoadsItsChosenRuntimesLibrary) {
  struct Case {
    Language language;
    std::string runtime;
    std::string source;
  };
  for (const Case& c : std::vector<Case>{
           {Language::kPython, "probe-py", "import aevatar_probe\naevatar_probe.hello()"},
           {Language::kJavaScript, "probe-js", "require('aevatar-probe').hello()"},
           {Language::kTypeScript, "probe-ts",
            "import { hello } from 'aevatar-probe';\nconst run: () => void = hello;\nrun();"},
           {Language::kBash, "probe-sh", "aevatar-probe"},
       }) {
    auto r = Run(c.language, c.source, c.runtime);
    ASSERT_TRUE(r.ok()) << c.runtime << ": " << r.status();
    EXPECT_EQ(r->verdict, Verdict::kOk) << c.runtime << ": " << r->stderr_data;
    EXPECT_EQ(r->stdout_data, kProbeLine) << c.runtime;
  }
}

TEST_F(RuntimeEngineTest, TheDefaultRuntimeSeesNoRuntimesLibrary) {
  auto py = Run(Language::kPython, "import aevatar_probe");
  ASSERT_TRUE(py.ok());
  EXPECT_EQ(py->verdict, Verdict::kNonzeroExit);
  EXPECT_NE(py->stderr_data.find("ModuleNotFoundError"), std::string::npos) << py->stderr_data;
  auto js = Run(Language::kJavaScript, "require('aevatar-probe')");
  ASSERT_TRUE(js.ok());
  EXPECT_EQ(js->verdict, Verdict::kNonzeroExit);
  EXPECT_NE(js->stderr_data.find("Cannot find module"), std::string::npos) << js->stderr_data;
  auto sh = Run(Language::kBash, "command -v aevatar-probe || echo absent; ls /opt 2>&1");
  ASSERT_TRUE(sh.ok());
  EXPECT_EQ(sh->stdout_data.find("/opt/runtimes"), std::string::npos) << sh->stdout_data;
  EXPECT_NE(sh->stdout_data.find("absent"), std::string::npos);
}

TEST_F(RuntimeEngineTest, TheHostsDistPackagesAreHiddenFromEveryRun) {
  // Whatever Debian installed there (pandas, after scripts/setup), a run
  // sees an empty directory.
  const std::string probe =
      "import os\n"
      "for d in ['/usr/lib/python3/dist-packages']:\n"
      "    print(d, os.path.isdir(d) and os.listdir(d))\n"
      "try:\n    import pandas\n    print('pandas visible')\n"
      "except ImportError:\n    print('no pandas')\n";
  auto r = Run(Language::kPython, probe);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kOk) << r->stderr_data;
  EXPECT_NE(r->stdout_data.find("no pandas"), std::string::npos) << r->stdout_data;
  if (std::filesystem::is_directory("/usr/lib/python3/dist-packages")) {
    EXPECT_NE(r->stdout_data.find("/usr/lib/python3/dist-packages []"), std::string::npos)
        << r->stdout_data;
  }
}

TEST_F(RuntimeEngineTest, TheRuntimeRootIsReadOnlyInside) {
  const std::string probe =
      "import errno, os\n"
      "d = '/opt/runtimes/probe-py'\n"
      "for what, act in [('create', lambda: open(d + '/planted', 'w')),\n"
      "                  ('mkdir', lambda: os.mkdir(d + '/lib/planted')),\n"
      "                  ('unlink', lambda: os.unlink(d + '/pyvenv.cfg')),\n"
      "                  ('chmod', lambda: os.chmod(d + '/pyvenv.cfg', 0o777))]:\n"
      "    try:\n        act()\n        print(what, 'DONE')\n"
      "    except OSError as e:\n        print(what, errno.errorcode[e.errno])\n";
  auto r = Run(Language::kPython, probe, "probe-py");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_data.find("DONE"), std::string::npos) << r->stdout_data;
  EXPECT_NE(r->stdout_data.find("create EROFS"), std::string::npos) << r->stdout_data;
  EXPECT_FALSE(std::filesystem::exists(python_->root() + "/planted"));
  EXPECT_TRUE(std::filesystem::exists(python_->root() + "/pyvenv.cfg"));
}

TEST_F(RuntimeEngineTest, AnUnknownOrOtherLanguagesRuntimeIsATypedRefusal) {
  auto unknown = Run(Language::kPython, "print(1)", "nope");
  EXPECT_EQ(base::ApiCode(unknown.status()), "UNKNOWN_RUNTIME");
  auto other = Run(Language::kBash, "echo 1", "probe-py");
  EXPECT_EQ(base::ApiCode(other.status()), "RUNTIME_LANGUAGE_MISMATCH");
  EXPECT_EQ(base::HttpStatusFor(other.status()), 400);
}

TEST_F(RuntimeEngineTest, AnUnusableRootStopsTheEngineFromStarting) {
  EngineOptions options;
  options.runtimes = {{"gone", Language::kPython, "/nonexistent/aevatar-runtime"}};
  auto engine = Engine::Create(options);
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(engine.status().message().find("gone"), std::string::npos);
}

TEST_F(RuntimeEngineTest, APandasAggregationRunsInThePythonDataRuntime) {
  const std::string problem = testing::PythonDataRootProblem();
  ASSERT_EQ(problem, "") << kPythonDataRoot << ": " << problem;
  const std::string source =
      "import pandas as pd\n"
      "df = pd.DataFrame({'city': ['Oslo', 'Lima', 'Oslo', 'Lima', 'Pune'],\n"
      "                   'sales': [10, 5, 7, 1, 4]})\n"
      "totals = df.groupby('city')['sales'].agg(['sum', 'mean'])\n"
      "print(totals.to_csv(), end='')\n";
  auto r = Run(Language::kPython, source, "python-data");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->verdict, Verdict::kOk) << r->stderr_data;
  EXPECT_EQ(r->stdout_data, "city,sum,mean\nLima,6,3.0\nOslo,17,8.5\nPune,4,4.0\n");
  // The same program on the default runtime: no pandas.
  auto plain = Run(Language::kPython, source);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->verdict, Verdict::kNonzeroExit);
  EXPECT_NE(plain->stderr_data.find("No module named 'pandas'"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::sandbox
