// aevatar backup | restore.
#include "cli/aevatar_backup_command.h"

#include <iostream>

#include "CLI/CLI.hpp"
#include "cli/server_replies.h"
#include "cli/state_backup.h"

namespace aevatar::cli {
namespace {

constexpr char kBackupFooter[] =
    R"(Example, while `aevatar up --state-dir /var/lib/aevatar-up` runs:
  aevatar backup --state-dir /var/lib/aevatar-up --to /backups/aevatar-$(date +%F)

Every SQLite database is copied with SQLite's online backup API (a consistent
snapshot; the services keep serving), with runner.id; manifest.json lists each
copy's size, SHA-256 and schema version. Keys are NOT copied: vault.key (or the
--vault-key-file of aevatar serve), at-rest.key, signing-keys.json and
credentials.json; the manifest lists them. Copy those to separate protected
storage: the backup's sealed data opens only with them. A PostgreSQL store is
backed up with pg_dump (docs/backup.md).)";

constexpr char kRestoreFooter[] = R"(Example, after stopping `aevatar up`:
  aevatar restore --from /backups/aevatar-2026-12-01 --state-dir /var/lib/aevatar-up

Checks every file's SHA-256 against the manifest first, and refuses, changing
nothing, while any service has a database of the state directory open. Keys
are not in a backup: the state directory's own keys stay; put back the keys
you kept separately when restoring onto a new machine.)";

void PrintManifest(const BackupManifest& manifest) {
  for (const ManifestEntry& entry : manifest.files) {
    std::cout << "  " << entry.path;
    if (entry.database) std::cout << "  (schema version " << entry.schema_version << ")";
    std::cout << "  " << entry.size << " bytes  sha256 " << entry.sha256 << "\n";
  }
}

int Fail(std::string_view command, const absl::Status& status, std::string_view fallback,
         bool as_json) {
  const std::string code = BackupErrorCode(status, fallback);
  std::cerr << "aevatar " << command << ": " << code << ": " << status.message() << "\n";
  if (as_json) std::cout << LocalProblemObject(code, std::string(status.message())).dump() << "\n";
  return 1;
}

}  // namespace

BackupCommands AddBackupCommands(CLI::App& app, BackupOptions& options) {
  BackupCommands commands;
  commands.backup = app.add_subcommand(
      "backup", "Copy the state directory's databases while the services keep serving");
  commands.backup->add_option("--to", options.to, "A new (or empty) directory for the backup")
      ->required();
  commands.backup->add_option("--state-dir", options.state_dir,
                              "The state directory (default .state, as aevatar up)");
  commands.backup->add_flag("--json", options.json,
                            "Print the backup's manifest (manifest.json) as the one JSON document");
  commands.backup->footer(kBackupFooter);
  commands.restore =
      app.add_subcommand("restore", "Put a backup back into a state directory (services stopped)");
  commands.restore->add_option("--from", options.from, "A directory `aevatar backup` wrote")
      ->required();
  commands.restore->add_option("--state-dir", options.state_dir,
                               "The state directory (default .state, as aevatar up)");
  commands.restore->add_flag("--json", options.json,
                             "Print the restored backup's manifest as the one JSON document");
  commands.restore->footer(kRestoreFooter);
  return commands;
}

int RunBackupCommand(const BackupCommands& commands, const BackupOptions& options) {
  if (commands.backup->parsed()) {
    auto manifest = TakeBackup(options.state_dir, options.to);
    if (!manifest.ok()) return Fail("backup", manifest.status(), kBackupFailed, options.json);
    if (options.json) {
      std::cout << ManifestJson(*manifest) << "\n";
      return 0;
    }
    std::cout << "backed up " << options.state_dir << " to " << options.to << ":\n";
    PrintManifest(*manifest);
    std::cout << "NOT copied (keep these separately; see " << options.to << "/" << kManifestName
              << "):\n";
    for (const NotCopied& skipped : manifest->not_copied) {
      std::cout << "  " << skipped.path << ": " << skipped.reason << "\n";
    }
    if (options.state_dir.empty() || manifest->files.empty()) {
      std::cout << "(no database found: is --state-dir the services' state directory?)\n";
    }
    return 0;
  }
  auto manifest = RestoreBackup(options.from, options.state_dir);
  if (!manifest.ok()) return Fail("restore", manifest.status(), kRestoreFailed, options.json);
  if (options.json) {
    std::cout << ManifestJson(*manifest) << "\n";
    return 0;
  }
  std::cout << "restored " << options.from << " (taken " << manifest->created_at << ") into "
            << options.state_dir << ":\n";
  PrintManifest(*manifest);
  return 0;
}

}  // namespace aevatar::cli
