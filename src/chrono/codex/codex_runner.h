#ifndef AEVATAR_CHRONO_CODEX_CODEX_RUNNER_H_
#define AEVATAR_CHRONO_CODEX_CODEX_RUNNER_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "chrono/codex/codex_home_template.h"
#include "chrono/codex/codex_request.h"
#include "chrono/codex/codex_run_cancels.h"
#include "http/client.h"
#include "sandbox/runner.h"

namespace aevatar::chrono {

inline constexpr char kDefaultCodexPath[] =
    "/opt/aevatar/codex/node_modules/@openai/codex-linux-x64/vendor/"
    "x86_64-unknown-linux-musl/bin/codex";

// Operator settings of the managed Codex runner (chrono-sandbox serve flags).
struct CodexRunnerOptions {
  std::string codex_path = kDefaultCodexPath;                    // --codex-path
  sandbox::BackendKind backend = sandbox::BackendKind::kGvisor;  // --codex-backend
  std::string model;          // --codex-model; required for the runner to be available
  int max_concurrent = 8;     // --codex-max-concurrent; past it 429 CODEX_RUNNER_BUSY
  std::string nyxid_url;      // NyxID's base URL: the relay forwards there
  http::ClientTls nyxid_tls;  // ... verified and mutually authenticated so
  // Whether the chosen backend can run here (gvisor: runsc is installed).
  bool backend_available = true;
};

// The terminal answer of a run that reached Codex, whatever its exit.
struct CodexRunResult {
  std::string status;  // "succeeded" | "failed" | "timed_out" | "cancelled"
  std::string output;  // the last agent_message's text (<= 64 KiB), else ""
  int exit_code = 0;
  std::string diagnostic_id;
  int64_t elapsed_ms = 0;
  std::string verdict;  // the sandbox verdict, for the log line (not in the body)
};

// Runs the managed Codex CLI once per request (DESIGN §6), thread-safe:
//   1. a fresh network namespace with one loopback listener (the relay);
//   2. the relay served by this process (codex_relay.h);
//   3. the fixed run (codex_profile.h) on the engine, starting from the
//      home template once it is made (codex_home_template.h), joined to that
//      namespace, with a random run key as NYXID_LLM_TOKEN: the relay
//      swaps it for the delegation token, which never enters the sandbox;
//   4. the relay stopped, the namespace and listener closed, the answer
//      taken from Codex's event stream (codex_events.h).
// The engine removes the run's processes, files and cgroup; the namespace
// goes with its last descriptor. Nothing of the prompt or token is logged.
class CodexRunner {
 public:
  CodexRunner(CodexRunnerOptions options, sandbox::Runner* engine);

  // OK when the runner can take runs; otherwise Unavailable (typed
  // CODEX_RUNNER_UNAVAILABLE, 503) saying what is missing.
  absl::Status Availability() const;

  // Runs `request` for `owner` (the delegation token's subject); `token`
  // (the caller's delegation token) is what the relay presents to NyxID for
  // the model calls. A request with a run id is registered under (owner,
  // run id) while it runs, and ends "cancelled" when Cancel reaches it.
  // Errors (no 200): Unavailable CODEX_RUNNER_UNAVAILABLE (503),
  // ResourceExhausted CODEX_RUNNER_BUSY (429) past max_concurrent,
  // AlreadyExists CODEX_RUN_ID_IN_USE (409), or a failure of the sandbox or
  // relay itself (Internal, 500).
  absl::StatusOr<CodexRunResult> Run(const CodexRequest& request, const std::string& token,
                                     const std::string& owner);

  // POST /codex/runs/{run_id}/cancel: kills `owner`'s run `run_id`
  // (CodexRunCancels::Cancel; 404 CODEX_RUN_NOT_FOUND for anything else).
  absl::Status Cancel(const std::string& owner, const std::string& run_id);

  int running() const;

  // Starts making the Codex home template (codex_home_template.h) in the
  // background when the runner is available; runs use it once it is made.
  void StartHomeTemplate();

 private:
  absl::StatusOr<CodexRunResult> RunInSlot(const CodexRequest& request, const std::string& token,
                                           int cancel_fd);

  const CodexRunnerOptions options_;
  sandbox::Runner* const engine_;
  mutable absl::Mutex mu_;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  CodexRunCancels cancels_;
  // Last: destroyed first, so a template run still going ends before the rest.
  CodexHomeTemplate home_template_;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_CODEX_CODEX_RUNNER_H_
