#ifndef AEVATAR_AEVATAR_CODEX_CREDENTIAL_SEALING_H_
#define AEVATAR_AEVATAR_CODEX_CREDENTIAL_SEALING_H_

#include <string>

#include "absl/status/statusor.h"
#include "aevatar/vault/vault_keyring.h"

// How every ManagedCredentialVault backend (SQLite, PostgreSQL) seals a
// user's Agent Key at rest and opens it again: bound to the user, so a
// sealed row moved to another user does not open.
namespace aevatar::orchestrator {

// Seals `secret` (the Agent Key) for `user_id`.
std::string SealManagedKey(const VaultKeyring& vault, const std::string& user_id,
                           const std::string& secret);

// The Agent Key `sealed` holds for `user_id`. DataLoss when it does not
// open (wrong vault key, tampering, another user) or is malformed.
absl::StatusOr<std::string> OpenManagedKey(const VaultKeyring& vault, const std::string& sealed,
                                           const std::string& user_id);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CODEX_CREDENTIAL_SEALING_H_
