#ifndef AEVATAR_AEVATAR_VAULT_RESEAL_H_
#define AEVATAR_AEVATAR_VAULT_RESEAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aevatar/vault/vault_keyring.h"

// Resealing what aevatar's state directory holds under the vault key, row by
// row, beside a running service: the sweep has its own SQLite connections,
// and each row is replaced only if it still holds the bytes the sweep read
// (a compare-and-swap), so a concurrent write is never undone.
namespace aevatar::orchestrator {

// One column of sealed values: `file` in the state directory, its `table`,
// the row's primary key and the sealed BLOB.
struct SealedColumn {
  const char* file;
  const char* table;
  const char* key;
  const char* blob;
};

// Every column aevatar seals with the vault key (a store that seals a new
// column adds it here): managed codex credentials, approvals' calls, the
// workflow runtime's material (definitions, caller credentials, operation
// material) and webhook secrets. NULL values are skipped.
inline constexpr SealedColumn kSealedColumns[] = {
    {"codex.db", "managed_codex_credentials", "user_id", "sealed_key"},
    {"approvals.db", "approvals", "id", "sealed_call"},
    {"workflows.db", "vault", "ref", "sealed"},
    // Webhook secrets; a cron trigger's row has none (NULL, skipped).
    {"triggers.db", "workflow_triggers", "trigger_id", "sealed_secret"},
};

// What one pass over a column found.
struct ResealCount {
  int64_t current = 0;   // rows already sealed under the keyring's current key
  int64_t resealed = 0;  // rows moved from `retiring_key` to the current key
  int64_t raced = 0;     // rows rewritten by the service while the pass read them
};

// One pass over `column` in `state_dir`: every row sealed under
// `retiring_key` is resealed under the keyring's current key. A missing file
// or table is an empty column. DataLoss (naming the table, never a row) when
// a row opens under neither key: the pass stops there and nothing is lost.
absl::StatusOr<ResealCount> ResealColumn(const std::string& state_dir, const SealedColumn& column,
                                         const VaultKeyring& keyring,
                                         std::string_view retiring_key);

// Rewrites each sealed file (VACUUM, then a truncating WAL checkpoint) so no
// superseded ciphertext lingers in free pages or the write-ahead log.
// Unavailable when a checkpoint could not finish (the service was busy).
absl::Status CompactSealedFiles(const std::string& state_dir);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_VAULT_RESEAL_H_
