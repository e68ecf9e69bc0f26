// The TypeScript cache and how a compile's outcome becomes the run's result,
// without running anything.
#include "sandbox/transpile_cache.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sandbox/typescript_compiler.h"

namespace aevatar::sandbox {
namespace {

std::shared_ptr<const TranspiledProgram> Compiled(std::string javascript) {
  auto program = std::make_shared<TranspiledProgram>();
  program->compiled = true;
  program->javascript = std::move(javascript);
  return program;
}

TEST(TranspileCacheKey, DependsOnTheTranspilerAndTheSourceAndNeverOnTheirBoundary) {
  const std::string key = TranspileCacheKey("esbuild 0.17.0", "let a = 1");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, TranspileCacheKey("esbuild 0.17.0", "let a = 1"));
  EXPECT_NE(key, TranspileCacheKey("esbuild 0.18.0", "let a = 1"));
  EXPECT_NE(key, TranspileCacheKey("esbuild 0.17.0", "let a = 2"));
  // The same concatenated bytes split differently are different keys.
  EXPECT_NE(TranspileCacheKey("ab", "c"), TranspileCacheKey("a", "bc"));
}

TEST(TranspileCache, ReturnsWhatWasStoredAndCountsHitsAndMisses) {
  TranspileCache cache(1 << 20);
  EXPECT_EQ(cache.Find("k1"), nullptr);
  cache.Insert("k1", Compiled("console.log(1)"));
  auto found = cache.Find("k1");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->javascript, "console.log(1)");
  const TranspileCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_GT(stats.bytes, 0u);
}

TEST(TranspileCache, StaysWithinItsBoundByDroppingTheLeastRecentlyUsed) {
  const size_t program_bytes = 10 << 10;
  TranspileCache cache(64 << 10);  // room for about five such programs
  for (int i = 0; i < 5; ++i) {
    cache.Insert("k" + std::to_string(i), Compiled(std::string(program_bytes, 'a' + i)));
  }
  ASSERT_NE(cache.Find("k0"), nullptr);  // k0 is now the most recently used
  for (int i = 5; i < 40; ++i) {
    cache.Insert("k" + std::to_string(i), Compiled(std::string(program_bytes, 'x')));
    EXPECT_LE(cache.stats().bytes, 64u << 10);
    if (i < 8) {
      ASSERT_NE(cache.Find("k0"), nullptr) << i;  // kept in use, kept
    }
  }
  EXPECT_EQ(cache.Find("k1"), nullptr);  // never used again: dropped
  EXPECT_NE(cache.Find("k39"), nullptr);
  EXPECT_LT(cache.stats().entries, 7u);
}

TEST(TranspileCache, AProgramTooLargeForTheCacheIsNotKeptAndEvictsNothing) {
  TranspileCache cache(64 << 10);
  cache.Insert("small", Compiled("1"));
  cache.Insert("huge", Compiled(std::string(32 << 10, 'h')));
  EXPECT_EQ(cache.Find("huge"), nullptr);
  EXPECT_NE(cache.Find("small"), nullptr);
}

TEST(TranspileCache, AnEvictedProgramStaysValidForItsHolder) {
  TranspileCache cache(8 << 10);
  cache.Insert("a", Compiled(std::string(1 << 10, 'a')));
  auto held = cache.Find("a");
  for (int i = 0; i < 20; ++i) cache.Insert(std::to_string(i), Compiled(std::string(1 << 10, 'b')));
  EXPECT_EQ(cache.Find("a"), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->javascript, std::string(1 << 10, 'a'));
}

TEST(TranspileCache, ThreadsFindingAndInsertingAtOnceSeeWholeProgramsAndTheBoundHolds) {
  TranspileCache cache(32 << 10);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 500; ++i) {
        const std::string key = "k" + std::to_string((i * 7 + t) % 50);
        if (auto found = cache.Find(key)) {
          // A program is never seen half-written: it is the one its key names.
          EXPECT_EQ(found->javascript, std::string(512, key.back()));
        } else {
          cache.Insert(key, Compiled(std::string(512, key.back())));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const TranspileCache::Stats stats = cache.stats();
  EXPECT_LE(stats.bytes, 32u << 10);
  EXPECT_EQ(stats.hits + stats.misses, 2000u);
  EXPECT_GT(stats.entries, 0u);
}

TEST(TypeScriptResult, ACompileErrorIsTheCompilersMessageAndExitCode) {
  TranspiledProgram refused;
  refused.exit_code = 1;
  refused.diagnostics = "main.ts:1:18: ERROR: Unexpected \";\"\n";
  RunResult compile;
  compile.wall_ms = 40;
  compile.cpu_ms = 30;
  Limits limits;
  RunResult r = CompileErrorResult(refused, compile, limits);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.verdict, Verdict::kNonzeroExit);
  EXPECT_EQ(r.stderr_data, refused.diagnostics);
  EXPECT_EQ(r.stdout_data, "");
  EXPECT_EQ(r.wall_ms, 40);
  // From the cache: the same answer, and nothing ran.
  RunResult cached = CompileErrorResult(refused, std::nullopt, limits);
  EXPECT_EQ(cached.stderr_data, refused.diagnostics);
  EXPECT_EQ(cached.wall_ms, 0);
  // The message is capped like any stderr.
  limits.max_output_bytes = 8;
  RunResult capped = CompileErrorResult(refused, std::nullopt, limits);
  EXPECT_EQ(capped.stderr_data, "main.ts:");
  EXPECT_TRUE(capped.stderr_truncated);
}

TEST(TypeScriptResult, WarningsComeBeforeTheProgramsStderrAndTheCompileIsCounted) {
  TranspiledProgram program;
  program.compiled = true;
  program.diagnostics = "warning\n";
  RunResult compile;
  compile.wall_ms = 50;
  compile.cpu_ms = 20;
  compile.max_rss_kb = 9000;
  RunResult run;
  run.stderr_data = "program\n";
  run.wall_ms = 10;
  run.cpu_ms = 5;
  run.max_rss_kb = 4000;
  MergeCompileIntoResult(program, compile, Limits{}, run);
  EXPECT_EQ(run.stderr_data, "warning\nprogram\n");
  EXPECT_EQ(run.wall_ms, 60);
  EXPECT_EQ(run.cpu_ms, 25);
  EXPECT_EQ(run.max_rss_kb, 9000);
}

TEST(TypeScriptResult, AnUnfinishedCompileKeepsItsVerdictButNotItsPartialJavaScript) {
  RunResult timed_out;
  timed_out.verdict = Verdict::kWallTimeout;
  timed_out.exit_code = 137;
  timed_out.stdout_data = "\"use strict\";\nconst a";
  RunResult r = UnfinishedCompileResult(timed_out);
  EXPECT_EQ(r.verdict, Verdict::kWallTimeout);
  EXPECT_EQ(r.stdout_data, "");
  RunResult overflowed;
  overflowed.stdout_data = "partial";
  overflowed.stdout_truncated = true;
  EXPECT_EQ(UnfinishedCompileResult(overflowed).verdict, Verdict::kOutputLimit);
  EXPECT_NE(UnfinishedCompileResult(overflowed).exit_code, 0);
}

TEST(TypeScriptResult, TheProgramGetsTheWallTimeLeftAfterItsCompile) {
  EXPECT_EQ(RemainingWallTimeoutSecs(30, 0), 30);
  EXPECT_EQ(RemainingWallTimeoutSecs(30, 1), 29);
  EXPECT_EQ(RemainingWallTimeoutSecs(30, 5000), 25);
  EXPECT_EQ(RemainingWallTimeoutSecs(2, 60000), 1);
}

}  // namespace
}  // namespace aevatar::sandbox
