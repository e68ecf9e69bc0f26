// aevatar: the orchestrator.
//   up         nyxid + chrono-sandbox + aevatar in one process (the embedded default)
//   serve      aevatar's HTTP API alone
//   login      log in through NyxID
//   exec       run a program through the code_execute tool
//   readiness  is code_execute ready for me?
//   tools      the tools and their selection rules
//   mcp        the tools over MCP on stdin/stdout, for agent hosts
//   workflow   save | run | list | watch | stop | show durable workflows
//   skill      publish | list | show | use: the skill registry
//   codex      credential ensure | status, exec: managed codex_exec
//   approvals  list | show | approve | deny: your durable approvals
//   doctor     check what `aevatar up` needs from this host
//   vault      rotate-key: a new vault key, without downtime (run on the aevatar host)
//   backup     copy the state directory's databases while serving
//   restore    put a backup back (services stopped)
#include "CLI/CLI.hpp"
#include "base/mutex_mode.h"
#include "cli/aevatar_approvals_command.h"
#include "cli/aevatar_backup_command.h"
#include "cli/aevatar_codex_command.h"
#include "cli/aevatar_commands.h"
#include "cli/aevatar_mcp_command.h"
#include "cli/aevatar_skill_command.h"
#include "cli/aevatar_vault_command.h"
#include "cli/aevatar_workflow_command.h"
#include "cli/command_examples.h"
#include "cli/config_file.h"
#include "cli/doctor_command.h"
#include "cli/version.h"

namespace {

// Each command's --help example (command_examples.h); `workflow`'s and
// backup's are set beside their commands.
const std::vector<aevatar::cli::CommandExample> kAevatarExamples = {
    {"", "aevatar up --state-dir ~/.local/state/aevatar-up"},
    {"up", "aevatar up --state-dir ~/.local/state/aevatar-up --store sqlite"},
    {"serve", "aevatar serve --config /etc/aevatar/aevatar.toml"},
    {"login", "aevatar login --url http://127.0.0.1:8082 --username demo --password-stdin"},
    {"exec", "aevatar exec --language python -c 'print(6 * 7)'"},
    {"readiness", "aevatar readiness code_execute --json"},
    {"tools", "aevatar tools --json"},
    {"codex", "aevatar codex exec --prompt 'add a test for parse()'"},
    {"codex credential", "aevatar codex credential status"},
    {"codex credential ensure", "aevatar codex credential ensure --json"},
    {"codex credential status", "aevatar codex credential status --json"},
    {"codex exec", "aevatar codex exec --prompt 'summarise README.md' --timeout-secs 300"},
    {"approvals", "aevatar approvals list"},
    {"approvals list", "aevatar approvals list --json"},
    {"approvals show", "aevatar approvals show apr_0123abcd"},
    {"approvals approve", "aevatar approvals approve apr_0123abcd"},
    {"approvals deny", "aevatar approvals deny apr_0123abcd"},
    {"doctor", "aevatar doctor --json"},
    {"vault", "aevatar vault rotate-key --state-dir ~/.local/state/aevatar-up/aevatar"},
    {"vault rotate-key",
     "aevatar vault rotate-key --state-dir /var/lib/aevatar --vault-key-file "
     "/etc/aevatar/vault.key "
     "--new-key-file /etc/aevatar/vault.key.new"},
};

}  // namespace

int main(int argc, char** argv) {
  aevatar::base::UseReleaseMutexes();
  using namespace aevatar::cli;
  CLI::App app{"aevatar: tools, admission and workflows over nyxid and chrono-sandbox"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("aevatar ") + kVersion);
  UpOptions up_options;
  CLI::App* up = AddUpCommand(app, up_options);
  aevatar::orchestrator::ServiceConfig serve_config;
  CLI::App* serve = AddAevatarServeCommand(app, serve_config);
  ClientOptions client;
  CLI::App* login = AddLoginCommand(app, client);
  CLI::App* exec = AddExecCommand(app, client);
  CLI::App* readiness = AddReadinessCommand(app, client);
  CLI::App* tools = AddToolsCommand(app, client);
  McpOptions mcp_options;
  CLI::App* mcp = AddMcpCommand(app, mcp_options);
  WorkflowOptions workflow_options;
  WorkflowCommands workflow = AddWorkflowCommand(app, workflow_options);
  SkillOptions skill_options;
  SkillCommands skill = AddSkillCommand(app, skill_options);
  CodexOptions codex_options;
  CodexCommands codex = AddCodexCommand(app, codex_options);
  ApprovalsOptions approvals_options;
  ApprovalsCommands approvals = AddApprovalsCommand(app, approvals_options);
  DoctorOptions doctor_options;
  CLI::App* doctor = AddAevatarDoctorCommand(app, doctor_options);
  VaultOptions vault_options;
  CLI::App* rotate_key = AddVaultCommand(app, vault_options);
  BackupOptions backup_options;
  BackupCommands backup = AddBackupCommands(app, backup_options);
  SetCommandExamples(app, kAevatarExamples);
  try {
    ParseWithServeConfig(app, serve, "aevatar", argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (up->parsed()) return RunUpCommand(up_options);
  if (serve->parsed()) return RunAevatarServeCommand(serve_config);
  if (login->parsed()) return RunLoginCommand(client);
  if (exec->parsed()) return RunExecCommand(client);
  if (readiness->parsed()) return RunReadinessCommand(client);
  if (tools->parsed()) return RunToolsCommand(client);
  if (mcp->parsed()) return RunMcpCommand(mcp_options);
  if (workflow.parsed()) return RunWorkflowCommand(workflow, workflow_options);
  if (skill.parsed()) return RunSkillCommand(skill, skill_options);
  if (codex.ensure->parsed() || codex.status->parsed() || codex.exec->parsed()) {
    return RunCodexCommand(codex, codex_options);
  }
  if (approvals.parsed()) return RunApprovalsCommand(approvals, approvals_options);
  if (doctor->parsed()) return RunAevatarDoctorCommand(doctor_options);
  if (rotate_key->parsed()) return RunVaultCommand(vault_options);
  if (backup.backup->parsed() || backup.restore->parsed()) {
    return RunBackupCommand(backup, backup_options);
  }
  return 2;
}
