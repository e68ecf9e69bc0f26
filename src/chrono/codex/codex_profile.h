#ifndef AEVATAR_CHRONO_CODEX_CODEX_PROFILE_H_
#define AEVATAR_CHRONO_CODEX_CODEX_PROFILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sandbox/run_spec.h"

// The fixed, caller-proof shape of one managed Codex run (DESIGN §6): the
// server-owned script, the runtime-written Codex config and the run's
// environment, files and limits. Nothing a caller sends reaches any of it
// except the prompt, which is the run's stdin data and so Codex's stdin: it
// is never a flag, a config value, a file name or a line of the script.
namespace aevatar::chrono {

// Where the Codex binary appears inside the sandbox (a read-only bind).
inline constexpr char kSandboxCodexPath[] = "/opt/codex/bin/codex";
// Codex's private home: inside the workspace (not under $TMPDIR, which
// Codex refuses), excluded from the Git work tree.
inline constexpr char kSandboxCodexHome[] = "/workspace/.aevatar/codex-home";
// /bin/false, first on PATH as `lsb_release` (read-only bind).
inline constexpr char kSandboxLsbReleasePath[] = "/opt/codex/bin/lsb_release";
// The Codex home template (codex_home_template.h), when there is one: a tar
// written read-only into the sandbox, unpacked into kSandboxCodexHome.
inline constexpr char kSandboxHomeTemplatePath[] = "/opt/codex/home-template.tar";
// The environment variable Codex reads the model credential from.
inline constexpr char kCodexTokenEnv[] = "NYXID_LLM_TOKEN";

// The script the run executes (bash, a constant). It deletes itself, makes
// /workspace an empty Git repository, unpacks the home template if the run
// has one, writes the config
// ($AEVATAR_CODEX_CONFIG, then unset) under .aevatar/ and replaces itself
// with exactly
//   codex --ask-for-approval never exec --ephemeral --json -
// which reads the prompt from the run's stdin.
extern const char kCodexRunScript[];

// Returns InvalidArgument unless `model` is 1..128 characters of
// [A-Za-z0-9._:/-] (so the config needs no escaping). Checked at start-up.
absl::Status ValidateCodexModelName(std::string_view model);

// Codex's config.toml: provider "nyxid" at http://127.0.0.1:PORT/v1 (the
// relay), wire_api responses, env_key NYXID_LLM_TOKEN, at most one request
// and stream retry, approval never, sandbox danger-full-access (the outer
// sandbox is the boundary), plugins, unbounded retries and analytics off,
// NYXID_* kept out of the commands Codex runs. Requires a valid model name.
std::string CodexConfigToml(std::string_view model, uint16_t relay_port);

// The whole run: bash with kCodexRunScript, the prompt as stdin, the Codex
// binary at kSandboxCodexPath, /bin/false at kSandboxLsbReleasePath, `token` (the relay's run key)
// as NYXID_LLM_TOKEN (server_env), and limits that fit Codex (a 1 GiB memory cgroup, 512 pids for
// its threads, 4 MiB of captured output per stream).
struct CodexRunInput {
  std::string codex_host_path;
  std::string model;
  uint16_t relay_port = 0;
  std::string prompt;
  std::string token;  // the credential Codex presents to the relay
  int timeout_secs = 180;
  sandbox::BackendKind backend = sandbox::BackendKind::kGvisor;
  // The home template's bytes, or null: Codex then makes its home itself.
  std::shared_ptr<const std::string> home_template;
};
sandbox::RunSpec BuildCodexRunSpec(const CodexRunInput& input);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_CODEX_CODEX_PROFILE_H_
