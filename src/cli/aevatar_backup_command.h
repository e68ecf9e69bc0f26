#ifndef AEVATAR_CLI_AEVATAR_BACKUP_COMMAND_H_
#define AEVATAR_CLI_AEVATAR_BACKUP_COMMAND_H_

#include <string>

namespace CLI {
class App;
}

namespace aevatar::cli {

// `aevatar backup --to DIR [--state-dir D]` and `aevatar restore --from DIR
// [--state-dir D]` (cli/state_backup.h): an online copy of the state
// directory's SQLite databases, safe while the services run, and its
// restore, refused while they run.
struct BackupOptions {
  std::string state_dir = ".state";  // `aevatar up`'s default
  std::string to;                    // backup: a new or empty directory
  std::string from;                  // restore: a backup directory
  bool json = false;                 // print the manifest (or a problem object) as JSON
};

struct BackupCommands {
  CLI::App* backup = nullptr;
  CLI::App* restore = nullptr;
};

BackupCommands AddBackupCommands(CLI::App& app, BackupOptions& options);

// Exit codes: 0 done, 1 refused or failed (a typed error code on stderr,
// nothing changed by a refused restore), 2 bad arguments.
int RunBackupCommand(const BackupCommands& commands, const BackupOptions& options);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_AEVATAR_BACKUP_COMMAND_H_
