#ifndef AEVATAR_CLI_AEVATAR_VAULT_COMMAND_H_
#define AEVATAR_CLI_AEVATAR_VAULT_COMMAND_H_

#include <string>

namespace CLI {
class App;
}

namespace aevatar::cli {

// `aevatar vault rotate-key (--vault-key-file F | --state-dir D)
//  [--new-key-file N] [--wait-secs S]`: replaces aevatar's vault key while
// aevatar keeps serving (aevatar/vault/key_rotation.h). Run on the aevatar
// host by whoever owns the key file: it stages the new key (N's 32 bytes,
// else fresh random ones) beside the key file, then waits until the running
// aevatar has resealed everything under it and the new key has replaced the
// old one in the key file. Without a running aevatar the rotation runs at
// its next start.
struct VaultOptions {
  std::string key_file;
  std::string state_dir;  // the key is <state_dir>/vault.key (the embedded default)
  std::string new_key_file;
  int wait_secs = 300;  // 0: stage and return
  bool json = false;    // one JSON document on stdout: {"key_file", "staged", "rotated"}
};

CLI::App* AddVaultCommand(CLI::App& app, VaultOptions& options);
// Exit codes: 0 rotated (or staged, with --wait-secs 0), 1 refused or not
// finished in time (the rotation stays staged and goes on), 2 bad arguments.
int RunVaultCommand(const VaultOptions& options);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_AEVATAR_VAULT_COMMAND_H_
