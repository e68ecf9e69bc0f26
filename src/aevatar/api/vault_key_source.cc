#include "aevatar/api/vault_key_source.h"

#include <sys/stat.h>

#include <cstdlib>
#include <utility>

#include "aevatar/vault/key_rotation.h"
#include "os/atomic_file.h"

namespace aevatar::orchestrator {
namespace {

constexpr size_t kKeyBytes = 32;

absl::StatusOr<std::string> FromHex(const char* variable, const std::string& hex) {
  if (hex.size() != 2 * kKeyBytes) {
    return absl::InvalidArgumentError(std::string(variable) + " must be 64 hex digits");
  }
  std::string key;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int byte = 0;
    for (char c : hex.substr(i, 2)) {
      int nibble = c >= '0' && c <= '9'   ? c - '0'
                   : c >= 'a' && c <= 'f' ? c - 'a' + 10
                   : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                          : -1;
      if (nibble < 0) {
        return absl::InvalidArgumentError(std::string(variable) + " must be 64 hex digits");
      }
      byte = byte * 16 + nibble;
    }
    key.push_back(static_cast<char>(byte));
  }
  return key;
}

// The key in `key_file`, with a rotation staged beside it folded in.
absl::StatusOr<VaultKey> WithStagedKey(std::string key, const char* source,
                                       const std::string& key_file) {
  VaultKey vault{std::move(key), "", source, key_file};
  auto staged = ReadStagedKey(key_file);
  if (!staged.ok()) return staged.status();
  // Equal keys: the rotation was promoted; only the staged copy is left.
  if (staged->has_value() && **staged != vault.key) {
    vault.retiring = std::exchange(vault.key, **std::move(staged));
  }
  return vault;
}

absl::StatusOr<VaultKey> FromEnvironment(const char* env) {
  auto key = FromHex(kVaultKeyEnv, env);
  if (!key.ok()) return key.status();
  VaultKey vault{*std::move(key), "", "environment", ""};
  const char* previous = std::getenv(kPreviousVaultKeyEnv);
  if (previous != nullptr && *previous != '\0') {
    auto retiring = FromHex(kPreviousVaultKeyEnv, previous);
    if (!retiring.ok()) return retiring.status();
    if (*retiring != vault.key) vault.retiring = *std::move(retiring);
  }
  return vault;
}

}  // namespace

absl::StatusOr<VaultKey> LoadVaultKey(const std::string& key_file, const std::string& state_dir) {
  const std::string in_state_dir = state_dir + "/vault.key";
  const char* env = std::getenv(kVaultKeyEnv);
  const bool external = !key_file.empty() || (env != nullptr && *env != '\0');
  if (!external) {
    auto key = os::LoadOrCreateKeyFile(in_state_dir, kKeyBytes);
    if (!key.ok()) return key.status();
    return WithStagedKey(*std::move(key), "state_dir", in_state_dir);
  }
  struct stat st {};
  if (::stat(in_state_dir.c_str(), &st) == 0) {
    return absl::FailedPreconditionError(
        in_state_dir +
        " exists, but the vault key is configured outside the state directory: move that file "
        "out (it is the key for what the state directory holds) and point --vault-key-file at it");
  }
  if (!key_file.empty()) {
    // An existing key must be private to this user; an absent one is made so.
    if (::stat(key_file.c_str(), &st) == 0) {
      auto key = os::ReadPrivateFile(key_file, kKeyBytes + 1);
      if (!key.ok()) return key.status();
      if (key->size() != kKeyBytes) {
        return absl::InvalidArgumentError("--vault-key-file must hold exactly 32 bytes");
      }
      return WithStagedKey(*std::move(key), "file", key_file);
    }
    auto key = os::LoadOrCreateKeyFile(key_file, kKeyBytes);
    if (!key.ok()) return key.status();
    return WithStagedKey(*std::move(key), "file", key_file);
  }
  return FromEnvironment(env);
}

}  // namespace aevatar::orchestrator
