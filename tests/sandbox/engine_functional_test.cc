// Functional behaviour of the engine, for every backend: real programs in each
// language, checked on what a caller sees (stdout, stderr, exit code, verdict).
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "sandbox/engine.h"

namespace aevatar::sandbox {
namespace {

class EngineFunctionalTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  static void SetUpTestSuite() {
    auto engine = Engine::Create();
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine).release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }

  RunResult Run(Language language, std::string source, std::string stdin_data = "",
                std::vector<EnvVar> env = {}) {
    RunSpec spec;
    spec.language = language;
    spec.source = std::move(source);
    spec.stdin_data = std::move(stdin_data);
    spec.env = std::move(env);
    spec.limits.wall_timeout_secs = 30;
    spec.backend = GetParam();
    auto result = engine_->Run(spec);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult{};
  }

  static Engine* engine_;
};

Engine* EngineFunctionalTest::engine_ = nullptr;

TEST_P(EngineFunctionalTest, PythonHelloWorld) {
  RunResult r = Run(Language::kPython, "print('hello, python')");
  EXPECT_EQ(r.stdout_data, "hello, python\n");
  EXPECT_EQ(r.stderr_data, "");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.verdict, Verdict::kOk);
}

TEST_P(EngineFunctionalTest, JavaScriptHelloWorld) {
  RunResult r = Run(Language::kJavaScript, "console.log('hello, js')");
  EXPECT_EQ(r.stdout_data, "hello, js\n");
  EXPECT_EQ(r.verdict, Verdict::kOk);
}

TEST_P(EngineFunctionalTest, TypeScriptWithTypeAnnotationsRuns) {
  RunResult r = Run(Language::kTypeScript,
                    "interface P { name: string }\n"
                    "const greet = (p: P): string => `hello, ${p.name}`;\n"
                    "console.log(greet({ name: 'ts' }));\n");
  EXPECT_EQ(r.stdout_data, "hello, ts\n");
  EXPECT_EQ(r.verdict, Verdict::kOk) << r.stderr_data;
}

TEST_P(EngineFunctionalTest, TypeScriptSyntaxErrorIsAFailedRunWithCompilerMessage) {
  RunResult r = Run(Language::kTypeScript, "const x: number = ;\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.verdict, Verdict::kNonzeroExit);
  EXPECT_NE(r.stderr_data.find("ERROR"), std::string::npos) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "");
}

TEST_P(EngineFunctionalTest, BashHelloWorld) {
  RunResult r = Run(Language::kBash, "echo \"hello, $0\" | tr a-z A-Z");
  EXPECT_NE(r.stdout_data.find("HELLO"), std::string::npos) << r.stdout_data;
  EXPECT_EQ(r.verdict, Verdict::kOk);
}

TEST_P(EngineFunctionalTest, StdinReachesEachLanguage) {
  EXPECT_EQ(
      Run(Language::kPython, "import sys; print(sys.stdin.read().upper())", "abc").stdout_data,
      "ABC\n");
  EXPECT_EQ(
      Run(Language::kJavaScript,
          "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(s.length))", "12345")
          .stdout_data,
      "5\n");
  EXPECT_EQ(Run(Language::kBash, "read line; echo \"got:$line\"", "x y\n").stdout_data,
            "got:x y\n");
}

TEST_P(EngineFunctionalTest, ExitCodesPassThrough) {
  EXPECT_EQ(Run(Language::kPython, "import sys; sys.exit(7)").exit_code, 7);
  EXPECT_EQ(Run(Language::kJavaScript, "process.exit(9)").exit_code, 9);
  RunResult r = Run(Language::kBash, "exit 42");
  EXPECT_EQ(r.exit_code, 42);
  EXPECT_EQ(r.verdict, Verdict::kNonzeroExit);
}

TEST_P(EngineFunctionalTest, StderrIsSeparateFromStdout) {
  RunResult r = Run(Language::kPython, "import sys; print('out'); print('err', file=sys.stderr)");
  EXPECT_EQ(r.stdout_data, "out\n");
  EXPECT_EQ(r.stderr_data, "err\n");
}

TEST_P(EngineFunctionalTest, PythonTracebackOnStderr) {
  RunResult r = Run(Language::kPython, "def f():\n  raise ValueError('boom')\nf()\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.stderr_data.find("Traceback"), std::string::npos);
  EXPECT_NE(r.stderr_data.find("ValueError: boom"), std::string::npos);
}

TEST_P(EngineFunctionalTest, Utf8AndBinaryOutputArePreservedAsBytes) {
  RunResult r = Run(Language::kPython, "print('héllo 世界 🎉')");
  EXPECT_EQ(r.stdout_data, "héllo 世界 🎉\n");
  RunResult b = Run(Language::kPython, "import sys; sys.stdout.buffer.write(bytes(range(256)))");
  ASSERT_EQ(b.stdout_data.size(), 256u);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(static_cast<unsigned char>(b.stdout_data[i]), i);
}

TEST_P(EngineFunctionalTest, CallerEnvReachesTheProgram) {
  RunResult r = Run(Language::kBash, "echo \"$GREETING/$HOME\"", "", {{"GREETING", "hi there"}});
  EXPECT_EQ(r.stdout_data, "hi there//workspace\n");
}

TEST_P(EngineFunctionalTest, ReservedEnvIsRejectedBeforeRunning) {
  RunSpec spec;
  spec.language = Language::kBash;
  spec.source = "true";
  spec.backend = GetParam();
  for (const char* name : {"NYXID_API_KEY", "NYXID_BASE_URL", "NYXID_LLM_TOKEN", "NYXID_OTHER",
                           "LD_PRELOAD", "LD_LIBRARY_PATH"}) {
    spec.env = {{name, "x"}};
    auto result = engine_->Run(spec);
    EXPECT_TRUE(absl::IsInvalidArgument(result.status())) << name << ": " << result.status();
  }
}

TEST_P(EngineFunctionalTest, ServerEnvWinsAndServiceEnvNeverLeaks) {
  ::setenv("AEVATAR_TEST_PLANTED_SECRET", "planted-7f3a9", 1);
  RunSpec spec;
  spec.language = Language::kBash;
  spec.source = "env";
  spec.server_env = {{"NYXID_BASE_URL", "http://127.0.0.1:1"}};
  spec.backend = GetParam();
  auto result = engine_->Run(spec);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_data.find("planted-7f3a9"), std::string::npos);
  EXPECT_NE(result->stdout_data.find("NYXID_BASE_URL=http://127.0.0.1:1"), std::string::npos);
  ::unsetenv("AEVATAR_TEST_PLANTED_SECRET");
}

TEST_P(EngineFunctionalTest, WallTimeoutKillsTheRun) {
  RunSpec spec;
  spec.language = Language::kPython;
  spec.source = "import time\nprint('started', flush=True)\ntime.sleep(60)\n";
  // Long enough for a loaded machine under a sanitizer to start Python and
  // print; the program's 60 s sleep is what the deadline must cut short.
  spec.limits.wall_timeout_secs = 8;
  spec.backend = GetParam();
  auto result = engine_->Run(spec);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->verdict, Verdict::kWallTimeout);
  EXPECT_EQ(result->stdout_data, "started\n");
  EXPECT_GE(result->wall_ms, 8000);
  EXPECT_LT(result->wall_ms, 30000);
}

TEST_P(EngineFunctionalTest, OutputBeyondTheCapIsTruncated) {
  RunSpec spec;
  spec.language = Language::kPython;
  spec.source = "import sys\nsys.stdout.write('x' * 3_000_000)\n";
  spec.limits.max_output_bytes = 1 << 20;
  spec.backend = GetParam();
  auto result = engine_->Run(spec);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_data.size(), 1u << 20);
  EXPECT_TRUE(result->stdout_truncated);
  EXPECT_EQ(result->verdict, Verdict::kOutputLimit);
}

TEST_P(EngineFunctionalTest, UsageIsReported) {
  RunResult r = Run(Language::kPython, "x = [0] * 5_000_000\nsum(range(3_000_000))\n");
  EXPECT_GT(r.wall_ms, 0);
  EXPECT_GT(r.max_rss_kb, 10'000);
}

INSTANTIATE_TEST_SUITE_P(Backends, EngineFunctionalTest,
                         ::testing::Values(BackendKind::kNative, BackendKind::kGvisor),
                         [](const auto& info) { return std::string(BackendName(info.param)); });

}  // namespace
}  // namespace aevatar::sandbox
