#ifndef AEVATAR_AEVATAR_API_VAULT_KEY_SOURCE_H_
#define AEVATAR_AEVATAR_API_VAULT_KEY_SOURCE_H_

#include <string>

#include "absl/status/statusor.h"

// Where aevatar's vault key (32 bytes; it seals workflow material, caller
// credentials, managed keys and approvals' calls) comes from, first match:
//   1. `key_file` (aevatar serve --vault-key-file): a file outside the state
//      directory, 0600, exactly 32 bytes; created when absent;
//   2. the environment variable AEVATAR_VAULT_KEY: 64 hex digits;
//   3. <state_dir>/vault.key, created when absent (the embedded default).
// With 1 or 2, a state directory copied on its own reveals no sealed secret;
// a vault.key left in it would, so start-up then refuses (FailedPrecondition
// saying to move it out).
//
// A rotation under way (aevatar/vault/key_rotation.h) is part of the answer:
// with 1 or 3 a staged key beside the key file (K.next) seals and the file's
// key only opens; with 2, AEVATAR_VAULT_PREVIOUS_KEY (64 hex digits) names
// the key being rotated away from.
namespace aevatar::orchestrator {

inline constexpr char kVaultKeyEnv[] = "AEVATAR_VAULT_KEY";
inline constexpr char kPreviousVaultKeyEnv[] = "AEVATAR_VAULT_PREVIOUS_KEY";

struct VaultKey {
  std::string key;       // 32 bytes: seals (the staged key during a rotation)
  std::string retiring;  // 32 bytes, or "" when no rotation is under way: only opens
  std::string source;    // "file", "environment" or "state_dir" (for the log)
  std::string key_file;  // where the key lives; "" for the environment
};

absl::StatusOr<VaultKey> LoadVaultKey(const std::string& key_file, const std::string& state_dir);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_VAULT_KEY_SOURCE_H_
