#include "aevatar/vault/vault_keyring.h"

#include <cstdlib>

#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

constexpr size_t kVaultKeyBytes = 32;

void RequireKeySize(const std::string& key) {
  // A wrong size is a programming error (the loaders check what operators give).
  if (key.size() != kVaultKeyBytes) std::abort();
}

}  // namespace

VaultKeyring::VaultKeyring(std::string current, std::string retiring)
    : current_(std::move(current)), retiring_(std::move(retiring)) {
  RequireKeySize(current_);
  if (!retiring_.empty()) RequireKeySize(retiring_);
}

std::string VaultKeyring::Seal(std::string_view plaintext) const {
  absl::MutexLock lock(&mu_);
  return base::SecretBoxSeal(current_, plaintext);
}

absl::StatusOr<std::string> VaultKeyring::Open(std::string_view sealed) const {
  absl::MutexLock lock(&mu_);
  auto opened = base::SecretBoxOpen(current_, sealed);
  if (opened.ok() || retiring_.empty()) return opened;
  return base::SecretBoxOpen(retiring_, sealed);
}

bool VaultKeyring::OpensWithCurrent(std::string_view sealed) const {
  absl::MutexLock lock(&mu_);
  return base::SecretBoxOpen(current_, sealed).ok();
}

absl::Status VaultKeyring::BeginRotation(const std::string& next) {
  RequireKeySize(next);
  absl::MutexLock lock(&mu_);
  if (next == current_) return absl::OkStatus();
  if (!retiring_.empty()) {
    return absl::FailedPreconditionError("a vault key rotation is still under way");
  }
  retiring_ = std::move(current_);
  current_ = next;
  return absl::OkStatus();
}

void VaultKeyring::Retire() {
  absl::MutexLock lock(&mu_);
  retiring_.clear();
}

bool VaultKeyring::rotating() const {
  absl::MutexLock lock(&mu_);
  return !retiring_.empty();
}

}  // namespace aevatar::orchestrator
