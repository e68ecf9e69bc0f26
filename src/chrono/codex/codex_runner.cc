#include "chrono/codex/codex_runner.h"

#include <chrono>

#include "base/api_error.h"
#include "base/crypto.h"
#include "chrono/codex/codex_events.h"
#include "chrono/codex/codex_profile.h"
#include "chrono/codex/codex_relay.h"
#include "http/problem.h"
#include "os/netns_listener.h"
#include "os/process.h"

namespace aevatar::chrono {
namespace {

using Clock = std::chrono::steady_clock;

// The relay's exchanges may outlast the run's deadline by this much (the run
// is killed at its deadline and the relay stopped right after anyway).
constexpr std::chrono::seconds kRelaySlack{5};

absl::Status Unavailable(std::string detail) {
  return base::ApiError(absl::StatusCode::kUnavailable, "CODEX_RUNNER_UNAVAILABLE",
                        std::move(detail), 503);
}

std::string StatusOf(const sandbox::RunResult& result, bool answered) {
  if (result.cancelled) return "cancelled";
  if (result.verdict == sandbox::Verdict::kWallTimeout) return "timed_out";
  if (result.verdict == sandbox::Verdict::kOk && result.exit_code == 0 && answered) {
    return "succeeded";
  }
  return "failed";
}

}  // namespace

CodexRunner::CodexRunner(CodexRunnerOptions options, sandbox::Runner* engine)
    : options_(std::move(options)), engine_(engine) {}

absl::Status CodexRunner::Availability() const {
  if (options_.model.empty()) return Unavailable("no model is configured (--codex-model)");
  if (options_.nyxid_url.empty()) {
    return Unavailable("no NyxID URL is configured for the model relay (--nyxid-url)");
  }
  if (!os::IsExecutable(options_.codex_path)) {
    return Unavailable("the Codex CLI is not installed at --codex-path");
  }
  if (!options_.backend_available) {
    return Unavailable("the configured sandbox backend is not available on this host");
  }
  if (options_.max_concurrent < 1) return Unavailable("--codex-max-concurrent is 0");
  return absl::OkStatus();
}

void CodexRunner::StartHomeTemplate() {
  if (!Availability().ok()) return;
  home_template_.StartMaking(engine_, BuildCodexHomeTemplateRunSpec(
                                          options_.codex_path, options_.model, options_.backend));
}

int CodexRunner::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

absl::StatusOr<CodexRunResult> CodexRunner::Run(const CodexRequest& request,
                                                const std::string& token,
                                                const std::string& owner) {
  if (absl::Status st = Availability(); !st.ok()) return st;
  CodexRunCancels::Registration registration;
  if (!request.run_id.empty()) {
    auto registered = cancels_.Register(owner, request.run_id);
    if (!registered.ok()) return registered.status();
    registration = std::move(*registered);
  }
  {
    absl::MutexLock lock(&mu_);
    if (running_ >= options_.max_concurrent) {
      return base::ApiError(absl::StatusCode::kResourceExhausted, "CODEX_RUNNER_BUSY",
                            "every managed Codex slot is busy; retry later", 429);
    }
    ++running_;
  }
  auto result = RunInSlot(request, token, registration.cancel_fd());
  absl::MutexLock lock(&mu_);
  --running_;
  return result;
}

absl::Status CodexRunner::Cancel(const std::string& owner, const std::string& run_id) {
  return cancels_.Cancel(owner, run_id);
}

absl::StatusOr<CodexRunResult> CodexRunner::RunInSlot(const CodexRequest& request,
                                                      const std::string& token, int cancel_fd) {
  const Clock::time_point started = Clock::now();
  auto netns = os::MakeNetnsListener();
  if (!netns.ok()) return netns.status();
  CodexRelayTarget target;
  target.nyxid_url = options_.nyxid_url;
  target.nyxid_tls = options_.nyxid_tls;
  target.user_service_id = request.user_service_id;
  // Codex holds only this (see codex_relay.h); the token stays here.
  target.run_key = base::RandomId("relay_");
  target.delegation_token = token;
  const std::string run_key = target.run_key;
  target.timeout = std::chrono::seconds(request.timeout_secs) + kRelaySlack;
  const uint16_t port = netns->port;
  auto relay = CodexRelay::Start(std::move(netns->listen), std::move(target));
  if (!relay.ok()) return relay.status();

  CodexRunInput input;
  input.codex_host_path = options_.codex_path;
  input.model = options_.model;
  input.relay_port = port;
  input.prompt = request.prompt;
  input.token = run_key;
  input.timeout_secs = request.timeout_secs;
  input.backend = options_.backend;
  input.home_template = home_template_.Get();
  sandbox::RunControl control;
  control.netns_fd = netns->netns.get();
  control.cancel_fd = cancel_fd;
  auto run = engine_->Run(BuildCodexRunSpec(input), control);
  (*relay)->Stop();
  if (!run.ok()) return run.status();

  const CodexAnswer answer = ExtractCodexAnswer(run->stdout_data);
  CodexRunResult result;
  result.status = StatusOf(*run, answer.found);
  result.output = answer.text;
  result.exit_code = run->exit_code;
  result.verdict = std::string(sandbox::VerdictName(run->verdict));
  result.diagnostic_id = http::NewDiagnosticId();
  result.elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  return result;
}

}  // namespace aevatar::chrono
