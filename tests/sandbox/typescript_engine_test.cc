// TypeScript through the engine's compiler and cache (typescript_compiler.h):
// what a caller sees for ordinary, erroneous and hostile-ish sources, on the
// native backend, with real esbuild and node.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sandbox/engine.h"

namespace aevatar::sandbox {
namespace {

// One service-style engine for the whole binary (made on first use, never
// freed: the runs' cache is what these tests watch).
Engine& ServiceEngine() {
  static Engine* const engine = [] {
    auto created = Engine::Create();
    if (!created.ok()) ADD_FAILURE() << created.status();
    return created.ok() ? created->release() : nullptr;
  }();
  return *engine;
}

// A TypeScript (or `language`) run of `source` on the native backend.
RunResult RunOnServiceEngine(std::string source, Language language = Language::kTypeScript) {
  RunSpec spec;
  spec.language = language;
  spec.source = std::move(source);
  spec.limits.wall_timeout_secs = 120;
  auto result = ServiceEngine().Run(spec);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : RunResult{};
}

TEST(TypeScriptEngine, TheSameSourceCompilesOnceAndRunsTheSameEveryTime) {
  const std::string source = "const n: number = 6 * 7; console.log(`answer ${n}`);\n";
  const TranspileCache::Stats before = ServiceEngine().typescript_cache_stats();
  RunResult first = RunOnServiceEngine(source);
  RunResult second = RunOnServiceEngine(source);
  const TranspileCache::Stats after = ServiceEngine().typescript_cache_stats();
  EXPECT_EQ(first.stdout_data, "answer 42\n");
  EXPECT_EQ(second.stdout_data, "answer 42\n");
  EXPECT_EQ(second.verdict, Verdict::kOk) << second.stderr_data;
  EXPECT_EQ(after.misses, before.misses + 1);
  EXPECT_EQ(after.hits, before.hits + 1);
  EXPECT_EQ(after.entries, before.entries + 1);
}

TEST(TypeScriptEngine, ASyntaxErrorIsTheCompilersMessageEveryTime) {
  const std::string source = "let ok = 1;\nconst x: number = ;\n";
  for (int attempt = 0; attempt < 2; ++attempt) {  // compiled, then from the cache
    RunResult r = RunOnServiceEngine(source);
    EXPECT_EQ(r.verdict, Verdict::kNonzeroExit) << attempt;
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.stdout_data, "");
    // esbuild's own message, naming the file and line the caller wrote.
    EXPECT_NE(r.stderr_data.find("ERROR"), std::string::npos) << r.stderr_data;
    EXPECT_NE(r.stderr_data.find("main.ts:2:"), std::string::npos) << r.stderr_data;
  }
}

TEST(TypeScriptEngine, CompilerWarningsComeBackOnStderrAndTheProgramStillRuns) {
  RunResult r = RunOnServiceEngine(
      "let x: number = 1;\nif (x == NaN) console.log('never');\nconsole.log('ran');\n");
  EXPECT_EQ(r.verdict, Verdict::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "ran\n");
  EXPECT_NE(r.stderr_data.find("NaN"), std::string::npos) << r.stderr_data;
}

TEST(TypeScriptEngine, UnicodeSurvivesCompileAndRun) {
  RunResult r = RunOnServiceEngine(
      "const grüße: string = 'héllo 世界 🎉';\n"
      "const π: number = 3.14;\n"
      "// комментарий\n"
      "console.log(grüße, π, '\\u{1F600}'.length);\n");
  EXPECT_EQ(r.verdict, Verdict::kOk) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "héllo 世界 🎉 3.14 2\n");
}

TEST(TypeScriptEngine, AHugeSourceCompilesAndRuns) {
  // About 3 MiB of typed statements.
  std::string source = "let total: number = 0;\n";
  const int statements = 100000;
  for (int i = 0; i < statements; ++i) {
    absl::StrAppend(&source, "total += (", i % 7, " as number); // padding padding\n");
  }
  source += "console.log(total);\n";
  ASSERT_GT(source.size(), 3u << 20);
  RunResult r = RunOnServiceEngine(source);
  EXPECT_EQ(r.verdict, Verdict::kOk) << r.stderr_data.substr(0, 2000);
  long expected = 0;
  for (int i = 0; i < statements; ++i) expected += i % 7;
  EXPECT_EQ(r.stdout_data, absl::StrCat(expected, "\n"));
}

TEST(TypeScriptEngine, AHugeMalformedSourceEndsInAVerdictAndALimitIsNeverCached) {
  // Deep nesting and an unterminated tail: the parser's worst shapes. esbuild
  // either refuses it or runs into the compile's memory limit.
  std::string source = "const x = " + std::string(200000, '(') + "1" + std::string(1 << 20, '<');
  const TranspileCache::Stats before = ServiceEngine().typescript_cache_stats();
  RunResult r = RunOnServiceEngine(source);
  const TranspileCache::Stats after = ServiceEngine().typescript_cache_stats();
  EXPECT_TRUE(r.verdict == Verdict::kNonzeroExit || r.verdict == Verdict::kMemoryLimit)
      << VerdictName(r.verdict);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data, "");
  if (r.verdict == Verdict::kNonzeroExit) {
    EXPECT_FALSE(r.stderr_data.empty());
  } else {
    // A limit says nothing about the source alone: the next run compiles again.
    EXPECT_EQ(after.entries, before.entries);
  }
}

TEST(TypeScriptEngine, AProgramThatLooksLikeACompilerFlagIsJustSource) {
  // The source reaches esbuild as a file, never as arguments.
  RunResult r = RunOnServiceEngine("--version\n");
  EXPECT_EQ(r.stdout_data, "");
  RunResult ok = RunOnServiceEngine("console.log('--outfile=/etc/passwd')");
  EXPECT_EQ(ok.stdout_data, "--outfile=/etc/passwd\n");
}

TEST(TypeScriptEngine, JavaScriptAndTypeScriptOfTheSameProgramAgree) {
  const std::string program = "console.log([1, 2, 3].map((v) => v * 2).join(','));";
  RunResult js = RunOnServiceEngine(program, Language::kJavaScript);
  RunResult ts = RunOnServiceEngine(program);
  EXPECT_EQ(js.stdout_data, "2,4,6\n");
  EXPECT_EQ(ts.stdout_data, js.stdout_data);
  EXPECT_EQ(ts.exit_code, js.exit_code);
}

TEST(TypeScriptEngineOneShot, AOneShotEngineStillCompilesInsideTheRun) {
  EngineOptions options;
  options.one_shot = true;
  auto engine = Engine::Create(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  RunSpec spec;
  spec.language = Language::kTypeScript;
  spec.source = "const s: string = 'one shot'; console.log(s)";
  auto r = (*engine)->Run(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stdout_data, "one shot\n");
  EXPECT_EQ((*engine)->typescript_cache_stats().misses, 0u);
}

}  // namespace
}  // namespace aevatar::sandbox
