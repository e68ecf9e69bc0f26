#include "chrono/codex/codex_profile.h"

#include "absl/strings/str_cat.h"

namespace aevatar::chrono {

// bash reads the script through an open descriptor, so deleting the file
// first keeps it out of the repository Codex sees. `set -eu`: any failed
// preparation step ends the run with a nonzero exit before Codex starts.
// Every process costs tens of milliseconds under gVisor's ptrace platform,
// so the script starts two (rm, mkdir), and tar when there is a home
// template: the empty repository is the few files `git init` would write,
// made with bash builtins.
const char kCodexRunScript[] = R"(set -eu
rm -f -- "$0"
cd /workspace
mkdir -p .git/objects .git/refs/heads .git/refs/tags .git/info .aevatar/codex-home
if [ -f /opt/codex/home-template.tar ]; then tar -xf /opt/codex/home-template.tar --no-overwrite-dir -C .aevatar/codex-home; fi
printf 'ref: refs/heads/main\n' > .git/HEAD
printf '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n' > .git/config
printf '.aevatar/\n' > .git/info/exclude
printf '%s' "$AEVATAR_CODEX_CONFIG" > .aevatar/codex-home/config.toml
unset AEVATAR_CODEX_CONFIG
exec codex --ask-for-approval never exec --ephemeral --json -
)";

namespace {

constexpr uint64_t kCodexMemoryBytes = 1ull << 30;
constexpr uint32_t kCodexMaxPids = 512;
constexpr uint64_t kCodexCaptureBytes = 4ull << 20;
constexpr uint32_t kCodexOpenFiles = 4096;

bool IsModelChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '/' || c == '-';
}

}  // namespace

absl::Status ValidateCodexModelName(std::string_view model) {
  if (model.empty() || model.size() > 128) {
    return absl::InvalidArgumentError("--codex-model must be 1..128 characters");
  }
  for (char c : model) {
    if (!IsModelChar(c)) {
      return absl::InvalidArgumentError("--codex-model may hold only [A-Za-z0-9._:/-]");
    }
  }
  return absl::OkStatus();
}

std::string CodexConfigToml(std::string_view model, uint16_t relay_port) {
  return absl::StrCat("model = \"", std::string(model), "\"\n",
                      "model_provider = \"nyxid\"\n"
                      "approval_policy = \"never\"\n"
                      "sandbox_mode = \"danger-full-access\"\n"
                      "\n"
                      "[model_providers.nyxid]\n"
                      "name = \"nyxid\"\n"
                      "base_url = \"http://127.0.0.1:",
                      relay_port, "/v1\"\n",
                      "wire_api = \"responses\"\n"
                      "env_key = \"",
                      kCodexTokenEnv, "\"\n",
                      "request_max_retries = 1\n"
                      "stream_max_retries = 1\n"
                      "\n"
                      "[features]\n"
                      "plugins = false\n"
                      "unbounded_connection_retries = false\n"
                      // The login-shell environment snapshot Codex takes
                      // before a command: a shell and its profile per run.
                      "shell_snapshot = false\n"
                      "\n"
                      "[analytics]\n"
                      "enabled = false\n"
                      "\n"
                      "[shell_environment_policy]\n"
                      "exclude = [\"NYXID_*\"]\n");
}

sandbox::RunSpec BuildCodexRunSpec(const CodexRunInput& input) {
  sandbox::RunSpec spec;
  spec.language = sandbox::Language::kBash;
  spec.source = kCodexRunScript;
  spec.stdin_data = input.prompt;
  spec.backend = input.backend;
  // Codex identifies the OS at start by running `lsb_release -a` twice (on
  // Debian a shell script of seven more processes each; about a second under
  // gVisor's ptrace platform): /bin/false answers it, and Codex falls back to
  // reading /etc/os-release.
  spec.server_files = {{input.codex_host_path, kSandboxCodexPath, nullptr},
                       {"/bin/false", kSandboxLsbReleasePath, nullptr}};
  if (input.home_template != nullptr) {
    spec.server_files.push_back({"", kSandboxHomeTemplatePath, input.home_template});
  }
  spec.server_env = {
      {"PATH", "/opt/codex/bin:/usr/local/bin:/usr/bin:/bin"},
      {"CODEX_HOME", kSandboxCodexHome},
      {"AEVATAR_CODEX_CONFIG", CodexConfigToml(input.model, input.relay_port)},
      {kCodexTokenEnv, input.token},
      {"NO_COLOR", "1"},
  };
  // Codex's home, its SQLite state above all, stays in the sandbox's memory.
  spec.memory_dirs = {".aevatar"};
  spec.limits.wall_timeout_secs = input.timeout_secs;
  spec.limits.memory_bytes = kCodexMemoryBytes;
  spec.limits.max_pids = kCodexMaxPids;
  spec.limits.max_output_bytes = kCodexCaptureBytes;
  spec.limits.max_open_files = kCodexOpenFiles;
  return spec;
}

}  // namespace aevatar::chrono
