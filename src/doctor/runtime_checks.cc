#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/utf8.h"
#include "chrono/codex/codex_runner.h"
#include "doctor/host_checks_internal.h"
#include "os/host_probe.h"
#include "os/process.h"
#include "sandbox/engine.h"
#include "sandbox/runtime.h"

namespace aevatar::doctor::internal {
namespace {

constexpr std::chrono::seconds kVersionTimeout{10};
// The Codex CLI version scripts/setup installs under /opt/aevatar/codex, from
// scripts/codex-version (src/doctor/CMakeLists.txt).
constexpr char kPinnedCodexVersion[] = AEVATAR_PINNED_CODEX_VERSION;
constexpr sandbox::Language kLanguages[] = {
    sandbox::Language::kPython, sandbox::Language::kJavaScript, sandbox::Language::kTypeScript,
    sandbox::Language::kBash};

// The first line `path --version` prints, or the error.
absl::StatusOr<std::string> VersionOf(const std::string& path) {
  auto out = os::CaptureProgramOutput({path, "--version"}, kVersionTimeout);
  if (!out.ok()) return out.status();
  std::string line = out->substr(0, out->find('\n'));
  const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
  return base::ToValidUtf8(std::string_view(trimmed.data(), trimmed.size()));
}

// Every program the engine runs for `language` (runtime.cc's plan) exists
// and prints a version.
Finding CheckRuntime(sandbox::Language language) {
  std::string detail;
  for (const sandbox::RuntimeStage& stage : sandbox::PlanRuntime(language).stages) {
    if (!os::IsExecutable(stage.path)) {
      return Fail(stage.path + " is missing or not executable",
                  "install the Debian packages scripts/setup installs (python3, nodejs, esbuild, "
                  "bash) at the paths the engine runs");
    }
    auto version = VersionOf(stage.path);
    if (!version.ok()) return Fail(std::string(version.status().message()), "");
    absl::StrAppend(&detail, detail.empty() ? "" : "; ", stage.path, " ", *version);
  }
  return Pass(detail);
}

// A check of gVisor: a blocker only when managed Codex is set up to use it.
Finding GvisorProblem(const HostCheckOptions& options, std::string detail, std::string fix) {
  if (options.codex_configured && options.codex_backend == "gvisor") {
    return Fail(std::move(detail), std::move(fix));
  }
  return Warn(detail + " (needed by managed codex_exec on the gvisor backend, not configured)",
              std::move(fix));
}

Finding CheckRunsc(const HostCheckOptions& options) {
  constexpr char kFix[] =
      "install gVisor's runsc (Debian: apt install runsc, or the release binary) at "
      "/usr/bin/runsc";
  if (!os::IsExecutable(options.runsc_path)) {
    return GvisorProblem(options, options.runsc_path + " is not installed", kFix);
  }
  auto version = VersionOf(options.runsc_path);
  if (!version.ok()) return GvisorProblem(options, std::string(version.status().message()), kFix);
  return Pass(absl::StrCat(options.runsc_path, " ", *version,
                           "; the engine runs it with --platform=ptrace (see gvisor.hello)"));
}

Finding CheckCodex(const HostCheckOptions& options) {
  const std::string path =
      options.codex_path.empty() ? chrono::kDefaultCodexPath : options.codex_path;
  const std::string fix = absl::StrCat("run scripts/setup (installs @openai/codex@",
                                       kPinnedCodexVersion, " under /opt/aevatar/codex)");
  const auto problem = [&](std::string detail) {
    if (options.codex_configured) return Fail(std::move(detail), fix);
    return Warn(detail + " (managed codex_exec is not configured)", fix);
  };
  if (!os::IsExecutable(path)) return problem(path + " is not installed");
  auto version = VersionOf(path);
  if (!version.ok()) return problem(std::string(version.status().message()));
  const std::string pinned = absl::StrCat("codex-cli ", kPinnedCodexVersion);
  if (*version != pinned) {
    return Warn(absl::StrCat(path, " is ", *version, ", not the pinned ", pinned), fix);
  }
  return Pass(absl::StrCat(path, " ", *version));
}

// The engine the hello worlds share, made on first use; a failure to make it
// is every hello world's finding.
class SharedEngine {
 public:
  explicit SharedEngine(std::string init_path) : init_path_(std::move(init_path)) {}
  absl::StatusOr<sandbox::Engine*> Get(const std::string& runsc_path) {
    if (!engine_.ok() && absl::IsUnknown(engine_.status())) {
      sandbox::EngineOptions options;
      options.prepared_namespaces = 1;
      options.init_path = init_path_;
      options.runsc_path = runsc_path;
      engine_ = sandbox::Engine::Create(options);
    }
    if (!engine_.ok()) return engine_.status();
    return engine_->get();
  }

 private:
  const std::string init_path_;
  absl::StatusOr<std::unique_ptr<sandbox::Engine>> engine_ = absl::UnknownError("not made");
};

std::string HelloSource(sandbox::Language language) {
  switch (language) {
    case sandbox::Language::kPython:
      return "print('hello from python')";
    case sandbox::Language::kJavaScript:
      return "console.log('hello from javascript')";
    case sandbox::Language::kTypeScript:
      return "const who: string = 'typescript'; console.log(`hello from ${who}`)";
    case sandbox::Language::kBash:
      return "echo hello from bash";
  }
  return "";
}

// Runs the language's hello world through the engine, as the service does.
Finding RunHello(SharedEngine& shared, const HostCheckOptions& options, sandbox::Language language,
                 sandbox::BackendKind backend) {
  const std::string language_name(sandbox::LanguageName(language));
  const std::string fix = absl::StrCat(
      "fix the failed checks above, then see the error of: chrono-sandbox run --language ",
      language_name, backend == sandbox::BackendKind::kGvisor ? " --backend gvisor" : "", " -c '",
      HelloSource(language), "'");
  auto engine = shared.Get(options.runsc_path);
  if (!engine.ok()) {
    return Fail("the sandbox engine cannot start: " + std::string(engine.status().message()), fix);
  }
  sandbox::RunSpec spec;
  spec.language = language;
  spec.backend = backend;
  spec.source = HelloSource(language);
  spec.limits.wall_timeout_secs = 60;
  auto result = (*engine)->Run(spec);
  if (!result.ok()) return Fail("sandbox failure: " + std::string(result.status().message()), fix);
  const std::string expected = "hello from " + language_name + "\n";
  if (result->verdict != sandbox::Verdict::kOk || result->stdout_data != expected) {
    return Fail(absl::StrCat("verdict ", std::string(sandbox::VerdictName(result->verdict)),
                             ", exit ", result->exit_code,
                             ", stderr: ", base::ToValidUtf8(result->stderr_data.substr(0, 300))),
                fix);
  }
  return Pass(absl::StrCat("printed \"hello from ", language_name, "\" in ", result->wall_ms,
                           " ms on the ", std::string(sandbox::BackendName(backend)), " backend"));
}

}  // namespace

void AppendRuntimeChecks(const HostCheckOptions& options, std::vector<Check>& checks) {
  for (sandbox::Language language : kLanguages) {
    checks.push_back({"runtime." + std::string(sandbox::LanguageName(language)),
                      [language] { return CheckRuntime(language); }});
  }
  checks.push_back({"runsc", [options] { return CheckRunsc(options); }});
  checks.push_back({"codex_cli", [options] { return CheckCodex(options); }});
  auto shared = std::make_shared<SharedEngine>(options.init_path);
  for (sandbox::Language language : kLanguages) {
    checks.push_back(
        {"hello." + std::string(sandbox::LanguageName(language)), [shared, options, language] {
           return RunHello(*shared, options, language, sandbox::BackendKind::kNative);
         }});
  }
  checks.push_back({"gvisor.hello", [shared, options] {
                      if (!os::IsExecutable(options.runsc_path)) {
                        return GvisorProblem(options, "skipped: runsc is not installed",
                                             "install runsc (see the runsc check)");
                      }
                      Finding found = RunHello(*shared, options, sandbox::Language::kBash,
                                               sandbox::BackendKind::kGvisor);
                      if (found.status == CheckStatus::kPass) return found;
                      return GvisorProblem(options, found.detail, found.remediation);
                    }});
}

}  // namespace aevatar::doctor::internal
