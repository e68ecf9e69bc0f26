// aevatar up | serve: the long-running modes of the `aevatar` binary.
#include <filesystem>
#include <iostream>
#include <vector>

#include "CLI/CLI.hpp"
#include "base/log.h"
#include "cli/aevatar_commands.h"
#include "cli/config_file.h"
#include "cli/embedded_stack.h"
#include "cli/operator_flags.h"
#include "cli/runtime_flag.h"
#include "cli/tls_flags.h"
#include "cli/wait_for_signal.h"

namespace aevatar::cli {
namespace {

// Where `aevatar up` finds the bundled skills when --skills-dir is not
// given: ./skills (a checkout), else beside the binary in an installed
// tree (PREFIX/share/aevatar/skills) or a build tree (build/bin/../../skills).
std::string DefaultSkillsDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> candidates = {fs::current_path(ec) / "skills"};
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path() / "../share/aevatar/skills");
    candidates.push_back(exe.parent_path() / "../../skills");
  }
  for (const fs::path& dir : candidates) {
    if (fs::is_directory(dir, ec)) return fs::weakly_canonical(dir, ec).string();
  }
  return "";
}

}  // namespace

CLI::App* AddUpCommand(CLI::App& app, UpOptions& options) {
  CLI::App* up = app.add_subcommand(
      "up", "Start nyxid, chrono-sandbox and aevatar in one process (the embedded default)");
  up->add_option("--state-dir", options.state_dir, "State directory (default .state)");
  up->add_option("--port-base", options.port_base,
                 "nyxid on N, chrono-sandbox on N+1, aevatar on N+2 (default 8080)");
  up->add_option("--llm-upstream", options.llm.base_url,
                 "OpenAI Responses-API base URL for managed codex_exec (POST {base}/responses)");
  up->add_option("--llm-api-key-file", options.llm.api_key_file,
                 "the provider's API key (a 0600 file; NyxID seals it and injects it upstream)");
  up->add_option("--llm-model", options.llm.model, "the model Codex asks the provider for");
  up->add_option("--llm-ca-file", options.llm.ca_file,
                 "PEM CA certificate(s) that verify an https --llm-upstream (a private CA; "
                 "default: the system trust store)");
  up->add_option("--codex-backend", options.llm.codex_backend,
                 "isolation of managed Codex runs: gvisor (default) or native")
      ->check(CLI::IsMember({"gvisor", "native"}));
  up->add_option("--store", options.store,
                 "sqlite (default) or postgresql://…: the state of all three services in one "
                 "shared database (their keys stay in the state directory)");
  up->add_option("--skills-dir", options.skills_dir,
                 "Skill directories to publish to aevatar's skill registry at start (default: "
                 "./skills, else the installed or built tree's bundled skills)");
  up->add_option("--sandbox-workers", options.sandbox_workers,
                 "Sandbox runs at once, synchronous and durable; managed Codex runs have a cap "
                 "of their own (default: one per core)")
      ->check(CLI::Range(1, 1024));
  up->add_option("--warm-python", options.warm_python,
                 "Python sandboxes kept started ahead of code_execute calls with the default "
                 "timeout (chrono-sandbox's --warm-python; default 0: none; ~10 MiB each)")
      ->check(CLI::Range(0, 64));
  AddRuntimeFlag(up, [&options](sandbox::RuntimeEnv env) { options.runtimes.push_back(env); });
  AddLogFormatFlag(up);
  return up;
}

int RunUpCommand(const UpOptions& options) {
  const LlmUpstreamOptions& llm = options.llm;
  if (!llm.ca_file.empty() && llm.base_url.empty()) {
    std::cerr << "aevatar up: --llm-ca-file needs --llm-upstream\n";
    return 2;
  }
  if (!llm.base_url.empty() && (llm.api_key_file.empty() || llm.model.empty())) {
    std::cerr << "aevatar up: --llm-upstream needs --llm-api-key-file and --llm-model\n";
    return 2;
  }
  UpOptions resolved = options;
  if (resolved.skills_dir.empty()) resolved.skills_dir = DefaultSkillsDir();
  BlockStopSignals();
  auto stack = EmbeddedStack::Start(resolved);
  if (!stack.ok()) {
    std::cerr << "aevatar up: " << stack.status().message() << "\n";
    return 1;
  }
  const EmbeddedStackInfo& info = (*stack)->info();
  const std::string aevatar_port = info.aevatar_url.substr(info.aevatar_url.rfind(':') + 1);
  std::cout << "aevatar listening on port " << aevatar_port << " ("
            << (info.first_start ? "initialised " : "reusing ") << options.state_dir << ")\n"
            << "  nyxid           " << info.nyxid_url << "\n"
            << "  chrono-sandbox  " << info.chrono_url << "\n"
            << "  aevatar         " << info.aevatar_url << "\n"
            << "Log in (credentials in " << info.credentials_file << ", mode 0600):\n"
            << "  aevatar login --url " << info.aevatar_url
            << " --username demo --credentials-file " << info.credentials_file << "\n"
            << "  aevatar exec --language python -c 'print(\"hello\")'\n"
            << "Stop with Ctrl-C." << std::endl;
  int sig = WaitForStopSignal();
  base::Log(base::LogLevel::kInfo, "aevatar_up.stopping", "", {{"signal", sig}});
  (*stack)->Stop();
  return 0;
}

CLI::App* AddAevatarServeCommand(CLI::App& app, orchestrator::ServiceConfig& config) {
  CLI::App* serve = app.add_subcommand("serve", "Serve aevatar's HTTP API");
  serve->add_option("--listen", config.listen, "HOST:PORT (default 127.0.0.1:8082)");
  serve->add_option("--state-dir", config.state_dir, "State directory")->required();
  serve->add_option("--store", config.store,
                    "sqlite (default: files in the state directory) or postgresql://… (a "
                    "database shared by replicas; password in a passfile, not inline)");
  serve->add_option("--replica-id", config.replica_id,
                    "This replica's id among those sharing --store, unique to it (default: random "
                    "per start; local on SQLite)");
  serve->add_option("--run-lease-ms", config.run_lease_ms,
                    "How long a replica's lease of a workflow run lasts unrenewed: the takeover "
                    "time after a replica dies (default 15000)");
  serve->add_option("--workflow-workers", config.workflow_workers,
                    "Workflow turns delivered at once by this replica (default 16, 1..256)");
  serve->add_option("--vault-key-file", config.vault_key_file,
                    "The vault key (32 bytes, 0600) outside the state directory; default: "
                    "$AEVATAR_VAULT_KEY (64 hex digits), else STATE_DIR/vault.key");
  serve->add_option("--nyxid-url", config.nyxid_url, "NyxID's base URL")->required();
  AddTlsFlags(serve, config.tls, "NyxID");
  serve->add_option("--introspection-secret-file", config.introspection_secret_file,
                    "This service's registered-client secret at NyxID");
  serve->add_option("--chrono-catalog-id", config.chrono_catalog_id,
                    "NyxID catalog id of chrono-sandbox (default chrono-sandbox)");
  serve->add_option("--stop-window-ms", config.stop_window_ms,
                    "Stop-cancellation window of workflow runs (default 120000)");
  serve->add_option("--audience", config.audience,
                    "Audience of delegation tokens minted for aevatar (default aevatar)");
  serve
      ->add_option("--managed-codex", config.managed_codex,
                   "Managed codex_exec eligibility: off (default), allowlist or all "
                   "(RolloutBoundary InternalOnly)")
      ->check(CLI::IsMember({"off", "allowlist", "all"}));
  serve->add_option("--managed-codex-allowlist", config.managed_codex_allowlist,
                    "Comma-separated NyxID user ids admitted under --managed-codex allowlist");
  serve->add_option("--llm-catalog-id", config.llm_catalog_id,
                    "NyxID catalog id of the managed model route (default chrono-llm-public)");
  serve->add_option("--managed-request-deadline-ms", config.managed_request_deadline_ms,
                    "Managed codex_exec request deadline (default 300000)");
  serve->add_option("--managed-client-deadline-ms", config.managed_client_deadline_ms,
                    "NyxID client bound on a managed request (default 330000)");
  AddRuntimeFlag(
      serve,
      [&config](sandbox::RuntimeEnv env) {
        config.runtimes.push_back({env.name, std::string(sandbox::LanguageName(env.language))});
      },
      /*root_required=*/false);
  serve->add_option("--bundled-skills-dir", config.bundled_skills_dir,
                    "Skill directories (skill.yaml + assets/*.yaml) to publish to the skill "
                    "registry at start (default: none)");
  AddOperatorFlags(serve, &config.metrics_token);
  AddConfigFlag(serve, "aevatar");
  return serve;
}

int RunAevatarServeCommand(const orchestrator::ServiceConfig& config) {
  BlockStopSignals();
  auto service = orchestrator::AevatarService::Start(config);
  if (!service.ok()) {
    std::cerr << "aevatar serve: " << service.status().message() << "\n";
    return 1;
  }
  std::cout << "aevatar listening on port " << (*service)->port() << std::endl;
  WaitForStopSignal();
  (*service)->Stop();
  return 0;
}

}  // namespace aevatar::cli
