#ifndef AEVATAR_AEVATAR_CODEX_CREDENTIAL_VAULT_H_
#define AEVATAR_AEVATAR_CODEX_CREDENTIAL_VAULT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/vault/vault_keyring.h"

// The secret vault of managed codex_exec: per NyxID user, the invocation
// Agent Key aevatar minted for that user's exact chrono-sandbox route. The
// key is sealed at rest (XChaCha20-Poly1305 with the service's vault key,
// sealed_json.h) together with its owner, so a sealed row moved to
// another user does not open. It never leaves this process except as the
// Authorization of the exact proxy request: never in a body, log, state,
// event or API response.
namespace aevatar::orchestrator {

struct ManagedCredential {
  std::string key_id;           // NyxID's id of the Agent Key (not secret)
  std::string chrono_route_id;  // the UserService the key is restricted to; never logged
  std::string secret;           // the key itself
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

// Thread-safe.
class ManagedCredentialVault {
 public:
  virtual ~ManagedCredentialVault() = default;
  // The user's credential, nullopt when none is stored. DataLoss when the
  // sealed key does not open (wrong vault key, tampering, another owner).
  virtual absl::StatusOr<std::optional<ManagedCredential>> Load(const std::string& user_id) = 0;
  // Stores (replaces) the user's credential, committed before it returns.
  virtual absl::Status Store(const std::string& user_id, const ManagedCredential& credential) = 0;
};

// A vault in the SQLite file at `path` (created 0600, ":memory:" for tests),
// sealing with `vault` (required; shared with the key rotation).
absl::StatusOr<std::unique_ptr<ManagedCredentialVault>> OpenSqliteCredentialVault(
    const std::string& path, std::shared_ptr<const VaultKeyring> vault);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CODEX_CREDENTIAL_VAULT_H_
