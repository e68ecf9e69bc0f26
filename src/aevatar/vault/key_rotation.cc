#include "aevatar/vault/key_rotation.h"

#include <filesystem>

#include "aevatar/vault/reseal.h"
#include "base/log.h"
#include "os/atomic_file.h"

namespace aevatar::orchestrator {
namespace {

constexpr size_t kKeyBytes = 32;
// Passes before the sweep gives up for now: each pass only meets rows the
// service rewrote during the previous one, so a busy service still converges.
constexpr int kMaxPasses = 8;

// One pass over every sealed column; true when nothing was under the
// retiring key.
absl::StatusOr<bool> SweepOnce(const std::string& state_dir, const VaultKeyring& keyring,
                               const std::string& retiring_key) {
  bool clean = true;
  for (const SealedColumn& column : kSealedColumns) {
    auto count = ResealColumn(state_dir, column, keyring, retiring_key);
    if (!count.ok()) return count.status();
    if (count->resealed > 0 || count->raced > 0) clean = false;
  }
  return clean;
}

}  // namespace

std::string StagedKeyPath(const std::string& key_file) { return key_file + ".next"; }

absl::Status StageNextKey(const std::string& key_file, const std::string& next_key) {
  if (next_key.size() != kKeyBytes) return absl::InvalidArgumentError("a vault key is 32 bytes");
  auto current = os::ReadPrivateFile(key_file, kKeyBytes + 1);
  if (!current.ok()) {
    return absl::FailedPreconditionError("the vault key file cannot be read: " +
                                         std::string(current.status().message()));
  }
  if (*current == next_key) {
    return absl::FailedPreconditionError("the new vault key is the current one");
  }
  absl::Status st =
      os::WriteFileAtomically(StagedKeyPath(key_file), next_key, 0600, os::IfExists::kFail);
  if (absl::IsAlreadyExists(st)) {
    return absl::AlreadyExistsError("a vault key rotation is already staged (" +
                                    StagedKeyPath(key_file) +
                                    "): aevatar finishes it while running, or at its next start");
  }
  return st;
}

absl::StatusOr<std::optional<std::string>> ReadStagedKey(const std::string& key_file) {
  auto staged = os::ReadPrivateFile(StagedKeyPath(key_file), kKeyBytes + 1);
  if (absl::IsNotFound(staged.status())) return std::optional<std::string>();
  if (!staged.ok()) return staged.status();
  if (staged->size() != kKeyBytes) {
    return absl::DataLossError(StagedKeyPath(key_file) + " must hold exactly 32 bytes");
  }
  return std::optional<std::string>(*std::move(staged));
}

absl::Status ResealAll(const std::string& state_dir, VaultKeyring& keyring,
                       const std::string& retiring_key) {
  bool clean = false;
  for (int pass = 0; pass < kMaxPasses && !clean; ++pass) {
    auto swept = SweepOnce(state_dir, keyring, retiring_key);
    if (!swept.ok()) return swept.status();
    clean = *swept;
  }
  if (!clean) {
    return absl::UnavailableError("sealed values kept changing under the sweep; it runs again");
  }
  keyring.Retire();
  // A value sealed under the old key just before the rotation began may have
  // been stored after the last pass read its table.
  auto stragglers = SweepOnce(state_dir, keyring, retiring_key);
  if (!stragglers.ok()) return stragglers.status();
  if (absl::Status st = CompactSealedFiles(state_dir); !st.ok()) {
    // Old ciphertext may stay in a WAL until SQLite reuses it; the old key
    // still opens nothing aevatar reads.
    base::Log(base::LogLevel::kWarn, "aevatar.vault_rotation.compact_incomplete", "",
              {{"error", std::string(st.message())}});
  }
  return absl::OkStatus();
}

absl::Status PromoteStagedKey(const std::string& key_file, const std::string& new_key) {
  if (absl::Status st = os::WriteFileAtomically(key_file, new_key, 0600); !st.ok()) return st;
  std::error_code error;
  std::filesystem::remove(StagedKeyPath(key_file), error);
  if (error) {
    return absl::UnavailableError("cannot remove " + StagedKeyPath(key_file) + ": " +
                                  error.message());
  }
  return absl::OkStatus();
}

}  // namespace aevatar::orchestrator
