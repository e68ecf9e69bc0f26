#include "sandbox/typescript_compiler.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace aevatar::sandbox {

namespace {

// The flags every compile uses; part of the cache key.
constexpr const char* kCompileFlags[] = {"--format=cjs", "--platform=node", "--log-level=warning"};
constexpr char kTypeScriptSource[] = "/main.ts";

RuntimePlan EsbuildPlan(std::vector<std::string> args) {
  const std::string source_path = absl::StrCat(kWorkspaceDir, kTypeScriptSource);
  std::vector<std::string> argv = {"esbuild"};
  for (std::string& arg : args) argv.push_back(std::move(arg));
  return {source_path, {{kEsbuildPath, std::move(argv)}}, {}};
}

// A compile's spec: the service's limits (bounded by the operator's maxima)
// with the caller's wall timeout, the whole output allowance for the
// JavaScript, no caller environment, the native layout without a runtime.
RunSpec CompileSpec(std::string_view source, int wall_timeout_secs, const Limits& max) {
  RunSpec spec;
  spec.language = Language::kTypeScript;
  spec.source = std::string(source);
  Limits& limits = spec.limits;
  limits.wall_timeout_secs = std::min(wall_timeout_secs, max.wall_timeout_secs);
  limits.memory_bytes = std::min(limits.memory_bytes, max.memory_bytes);
  limits.max_pids = std::min(limits.max_pids, max.max_pids);
  limits.max_output_bytes = max.max_output_bytes;
  limits.max_file_bytes = std::min(limits.max_file_bytes, max.max_file_bytes);
  limits.tmpfs_bytes = std::min(limits.tmpfs_bytes, max.tmpfs_bytes);
  limits.max_open_files = std::min(limits.max_open_files, max.max_open_files);
  return spec;
}

// Size and mtime of the esbuild binary: a change means a new version.
std::string BinaryStamp() {
  std::error_code ec;
  const auto size = std::filesystem::file_size(kEsbuildPath, ec);
  if (ec) return "missing";
  const auto mtime = std::filesystem::last_write_time(kEsbuildPath, ec);
  if (ec) return "missing";
  return absl::StrCat(size, "@", mtime.time_since_epoch().count());
}

void AppendCapped(std::string& to, std::string_view text, uint64_t cap, bool& truncated) {
  const size_t room = to.size() < cap ? cap - to.size() : 0;
  if (text.size() > room) truncated = true;
  to.append(text.substr(0, room));
}

}  // namespace

TypeScriptCompiler::TypeScriptCompiler(size_t cache_bytes, const Limits& max_limits)
    : max_limits_(max_limits), cache_(cache_bytes) {}

absl::StatusOr<std::string> TypeScriptCompiler::Identity(SandboxedRun sandboxed) {
  absl::MutexLock lock(&identity_mu_);
  const std::string stamp = BinaryStamp();
  if (!identity_.empty() && stamp == binary_stamp_) return identity_;
  RunSpec spec = CompileSpec("", 30, max_limits_);
  auto probe = sandboxed(spec, EsbuildPlan({"--version"}));
  if (!probe.ok()) return probe.status();
  if (probe->verdict != Verdict::kOk || probe->stdout_data.empty()) {
    // The service's fault (esbuild missing, or the probe cut short), not
    // the caller's: a 5xx, and the next run probes again.
    return absl::UnavailableError(absl::StrCat("TypeScript needs esbuild at ", kEsbuildPath,
                                               ", which did not report its version (exit ",
                                               probe->exit_code, ")"));
  }
  std::string identity = absl::StrCat("esbuild ", absl::StripAsciiWhitespace(probe->stdout_data));
  for (const char* flag : kCompileFlags) absl::StrAppend(&identity, " ", flag);
  binary_stamp_ = stamp;
  identity_ = std::move(identity);
  return identity_;
}

absl::StatusOr<CompileOutcome> TypeScriptCompiler::Compile(std::string_view source,
                                                           int wall_timeout_secs,
                                                           SandboxedRun sandboxed) {
  auto identity = Identity(sandboxed);
  if (!identity.ok()) return identity.status();
  const std::string key = TranspileCacheKey(*identity, source);
  if (auto cached = cache_.Find(key)) return CompileOutcome{std::move(cached), std::nullopt};

  std::vector<std::string> args = {absl::StrCat(kWorkspaceDir, kTypeScriptSource)};
  for (const char* flag : kCompileFlags) args.push_back(flag);
  auto run =
      sandboxed(CompileSpec(source, wall_timeout_secs, max_limits_), EsbuildPlan(std::move(args)));
  if (!run.ok()) return run.status();
  CompileOutcome outcome;
  const bool finished = !run->cancelled && !run->stdout_truncated && !run->stderr_truncated &&
                        (run->verdict == Verdict::kOk || run->verdict == Verdict::kNonzeroExit);
  if (finished) {
    auto program = std::make_shared<TranspiledProgram>();
    program->compiled = run->verdict == Verdict::kOk;
    program->exit_code = run->exit_code;
    if (program->compiled) program->javascript = std::move(run->stdout_data);
    program->diagnostics = std::move(run->stderr_data);
    run->stdout_data.clear();
    run->stderr_data.clear();
    cache_.Insert(key, program);
    outcome.program = std::move(program);
  }
  outcome.run = std::move(*run);
  return outcome;
}

RunResult CompileErrorResult(const TranspiledProgram& program,
                             const std::optional<RunResult>& compile, const Limits& limits) {
  RunResult result;
  if (compile.has_value()) {
    result.wall_ms = compile->wall_ms;
    result.cpu_ms = compile->cpu_ms;
    result.max_rss_kb = compile->max_rss_kb;
  }
  result.exit_code = program.exit_code;
  result.verdict = Verdict::kNonzeroExit;
  AppendCapped(result.stderr_data, program.diagnostics, limits.max_output_bytes,
               result.stderr_truncated);
  return result;
}

RunResult UnfinishedCompileResult(RunResult compile) {
  compile.stdout_data.clear();
  compile.stdout_truncated = false;
  if (compile.verdict == Verdict::kOk || compile.verdict == Verdict::kNonzeroExit) {
    // Finished but its output overflowed the operator's output allowance.
    compile.verdict = Verdict::kOutputLimit;
    if (compile.exit_code == 0) compile.exit_code = 1;
  }
  return compile;
}

void MergeCompileIntoResult(const TranspiledProgram& program,
                            const std::optional<RunResult>& compile, const Limits& limits,
                            RunResult& result) {
  if (!program.diagnostics.empty()) {
    std::string stderr_data;
    bool truncated = result.stderr_truncated;
    AppendCapped(stderr_data, program.diagnostics, limits.max_output_bytes, truncated);
    AppendCapped(stderr_data, result.stderr_data, limits.max_output_bytes, truncated);
    result.stderr_data = std::move(stderr_data);
    result.stderr_truncated = truncated;
  }
  if (compile.has_value()) {
    result.wall_ms += compile->wall_ms;
    result.cpu_ms += compile->cpu_ms;
    result.max_rss_kb = std::max(result.max_rss_kb, compile->max_rss_kb);
  }
}

int RemainingWallTimeoutSecs(int wall_timeout_secs, int64_t compile_wall_ms) {
  const int64_t spent_secs = (compile_wall_ms + 999) / 1000;
  return static_cast<int>(std::max<int64_t>(1, wall_timeout_secs - spent_secs));
}

}  // namespace aevatar::sandbox
