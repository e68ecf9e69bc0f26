#include "chrono/codex/codex_home_template.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "base/log.h"

namespace aevatar::chrono {

// `--skip-git-repo-check`: the template run has no repository, so nothing
// of a workspace can end up in the home. Codex's own output is dropped;
// only the tar is the run's stdout.
const char kCodexHomeTemplateScript[] = R"(set -eu
rm -f -- "$0"
mkdir -p /workspace/.aevatar/codex-home /workspace/empty
printf '%s' "$AEVATAR_CODEX_CONFIG" > /workspace/.aevatar/codex-home/config.toml
unset AEVATAR_CODEX_CONFIG
cd /workspace/empty
codex --ask-for-approval never exec --ephemeral --skip-git-repo-check --json - >/dev/null 2>&1 || true
cd /workspace/.aevatar/codex-home
rm -f config.toml installation_id
exec tar -cf - .
)";

namespace {

// Port 9 (discard) on the run's own loopback: nothing listens there.
constexpr uint16_t kUnreachablePort = 9;
constexpr int kTemplateTimeoutSecs = 60;
constexpr size_t kTarBlock = 512;
constexpr size_t kUstarMagicOffset = 257;

}  // namespace

sandbox::RunSpec BuildCodexHomeTemplateRunSpec(const std::string& codex_host_path,
                                               std::string_view model,
                                               sandbox::BackendKind backend) {
  CodexRunInput input;
  input.codex_host_path = codex_host_path;
  input.model = std::string(model);
  input.relay_port = kUnreachablePort;
  input.prompt = "Reply with OK";
  input.token = "template-run-has-no-credential";
  input.timeout_secs = kTemplateTimeoutSecs;
  input.backend = backend;
  sandbox::RunSpec spec = BuildCodexRunSpec(input);
  spec.source = kCodexHomeTemplateScript;
  return spec;
}

absl::StatusOr<std::shared_ptr<const std::string>> CodexHomeTemplateFrom(
    const sandbox::RunResult& result) {
  if (result.verdict != sandbox::Verdict::kOk || result.exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the template run ended ", std::string(sandbox::VerdictName(result.verdict)),
                     " (exit ", result.exit_code, ")"));
  }
  const std::string& tar = result.stdout_data;
  if (result.stdout_truncated || tar.empty() || tar.size() % kTarBlock != 0 ||
      tar.compare(kUstarMagicOffset, 5, "ustar") != 0) {
    return absl::FailedPreconditionError("the template run's output is not a whole tar");
  }
  return std::make_shared<const std::string>(tar);
}

CodexHomeTemplate::~CodexHomeTemplate() {
  if (!maker_.joinable()) return;
  os::WriteWakeByte(cancel_.write_end.get());
  maker_.join();
}

void CodexHomeTemplate::StartMaking(sandbox::Runner* engine, sandbox::RunSpec spec) {
  if (maker_.joinable()) return;
  auto pipe = os::MakePipe();
  if (!pipe.ok()) {
    base::Log(base::LogLevel::kWarn, "codex.home_template_failed", "",
              {{"error", std::string(pipe.status().message())}});
    return;
  }
  cancel_ = std::move(*pipe);
  maker_ = std::thread([this, engine, spec = std::move(spec)] { Make(engine, spec); });
}

std::shared_ptr<const std::string> CodexHomeTemplate::Get() const {
  absl::MutexLock lock(&mu_);
  return template_;
}

void CodexHomeTemplate::Make(sandbox::Runner* engine, const sandbox::RunSpec& spec) {
  const auto started = std::chrono::steady_clock::now();
  sandbox::RunControl control;
  control.cancel_fd = cancel_.read_end.get();
  auto run = engine->Run(spec, control);
  if (run.ok() && run->cancelled) return;  // chrono-sandbox is stopping
  auto made = run.ok() ? CodexHomeTemplateFrom(*run) : run.status();
  if (!made.ok()) {
    base::Log(base::LogLevel::kWarn, "codex.home_template_failed", "",
              {{"error", std::string(made.status().message())}});
    return;
  }
  const auto elapsed = std::chrono::steady_clock::now() - started;
  base::Log(
      base::LogLevel::kInfo, "codex.home_template_made", "",
      {{"bytes", (*made)->size()},
       {"elapsed_ms", std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()}});
  absl::MutexLock lock(&mu_);
  template_ = std::move(*made);
}

}  // namespace aevatar::chrono
