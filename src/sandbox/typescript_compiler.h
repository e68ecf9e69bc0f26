#ifndef AEVATAR_SANDBOX_TYPESCRIPT_COMPILER_H_
#define AEVATAR_SANDBOX_TYPESCRIPT_COMPILER_H_

// TypeScript runs as JavaScript compiled ahead of the run.
//
// A TypeScript run used to be two stages in one sandbox: esbuild, then node.
// esbuild (a Go program) costs more than node's own start, and the same
// source compiles to the same JavaScript every time, so the engine now
// compiles once per distinct source and caches the result in memory:
//
//   source ──sha256(esbuild version, flags, source)──► cache ──hit──► node run
//                                                        │miss
//                          esbuild in a sandbox of its own (below) ──► cache
//
// The compile is hostile input handled by a parser, so it never runs on the
// host as it is: it runs through the same backend as the program (every
// containment step: namespaces, no network, cgroup limits, rlimits,
// seccomp), with the service's fixed limits (never the caller's, so that a
// cached result depends on the source alone), no caller environment, and the
// caller's wall timeout and cancellation. Its stdout is the JavaScript, its
// stderr the diagnostics. A syntax error (esbuild exits non-zero) is cached
// like a success and becomes the run's result: the compiler's message on
// stderr and its exit code. A compile that did not finish (timeout, limits,
// cancellation) is never cached. See docs/security.md for the trade-offs.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "sandbox/run_spec.h"
#include "sandbox/runtime.h"
#include "sandbox/transpile_cache.h"

namespace aevatar::sandbox {

// Runs `plan` for `spec` in a sandbox (the engine's backend, with the
// engine's layout added); the result or a sandbox failure.
using SandboxedRun = absl::FunctionRef<absl::StatusOr<RunResult>(const RunSpec&, RuntimePlan)>;

// What Compile found for one source.
struct CompileOutcome {
  // The compiled program or the compiler's refusal; null when the compile
  // did not finish (then `run` says why: its verdict, `cancelled`).
  std::shared_ptr<const TranspiledProgram> program;
  // The compiler's sandboxed run; empty when the cache answered.
  std::optional<RunResult> run;
};

// Compiles TypeScript sources through a cache. Thread-safe.
class TypeScriptCompiler {
 public:
  // Keeps up to `cache_bytes` of compiled programs (TranspileCache). A
  // compile runs with `max_limits`' bounds and the defaults below them.
  TypeScriptCompiler(size_t cache_bytes, const Limits& max_limits);

  // Returns the program for `source`: from the cache, or by running esbuild
  // through `sandboxed` (the first compile after esbuild's binary changed
  // also asks it for its version, which is part of the cache key). Errors
  // only when the sandbox failed or esbuild cannot report a version.
  absl::StatusOr<CompileOutcome> Compile(std::string_view source, int wall_timeout_secs,
                                         SandboxedRun sandboxed);

  TranspileCache::Stats cache_stats() const { return cache_.stats(); }

 private:
  // esbuild's version and flags, re-probed when the binary's size or mtime
  // changes (an upgrade under a running service).
  absl::StatusOr<std::string> Identity(SandboxedRun sandboxed);

  const Limits max_limits_;
  TranspileCache cache_;
  absl::Mutex identity_mu_;
  std::string binary_stamp_ ABSL_GUARDED_BY(identity_mu_);
  std::string identity_ ABSL_GUARDED_BY(identity_mu_);
};

// The run's result when the compiler refused the source: its exit code and
// message (capped by `limits`), verdict kNonzeroExit, nothing on stdout;
// `compile` (when it ran) gives the time and memory used.
RunResult CompileErrorResult(const TranspiledProgram& program,
                             const std::optional<RunResult>& compile, const Limits& limits);

// The run's result when the compile did not finish: `compile`'s verdict and
// stderr, without the partial JavaScript it printed.
RunResult UnfinishedCompileResult(RunResult compile);

// Folds the compile into the program's `result`: the compiler's warnings
// before the program's stderr (capped by `limits`), its time and memory
// added when it ran.
void MergeCompileIntoResult(const TranspiledProgram& program,
                            const std::optional<RunResult>& compile, const Limits& limits,
                            RunResult& result);

// The wall timeout left for the program after a compile that took
// `compile_wall_ms` of `wall_timeout_secs`; at least 1 s.
int RemainingWallTimeoutSecs(int wall_timeout_secs, int64_t compile_wall_ms);

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_TYPESCRIPT_COMPILER_H_
