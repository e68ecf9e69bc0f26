#include "chrono/credential_sealer.h"

#include "base/crypto.h"
#include "nlohmann/json.hpp"
#include "os/atomic_file.h"

namespace aevatar::chrono {

absl::StatusOr<CredentialSealer> CredentialSealer::LoadOrCreate(const std::string& state_dir) {
  auto key = os::LoadOrCreateKeyFile(state_dir + "/at-rest.key", 32);
  if (!key.ok()) return key.status();
  return CredentialSealer(std::move(*key));
}

absl::StatusOr<CredentialSealer> CredentialSealer::LoadShared(const std::string& key_file) {
  constexpr size_t kKeyBytes = 32;
  auto key = os::ReadPrivateFile(key_file, kKeyBytes + 1);
  if (!key.ok()) {
    return absl::Status(key.status().code(),
                        "--sealing-key-file: " + std::string(key.status().message()));
  }
  if (key->size() != kKeyBytes) {
    return absl::InvalidArgumentError("--sealing-key-file " + key_file +
                                      " must hold exactly 32 bytes (head -c 32 /dev/urandom)");
  }
  return CredentialSealer(std::move(*key));
}

std::string CredentialSealer::Seal(const std::vector<sandbox::EnvVar>& env) const {
  if (env.empty()) return "";
  nlohmann::json json = nlohmann::json::object();
  for (const auto& var : env) json[var.name] = var.value;
  return base::Base64UrlEncode(base::SecretBoxSeal(key_, json.dump()));
}

absl::StatusOr<std::vector<sandbox::EnvVar>> CredentialSealer::Unseal(
    const std::string& sealed) const {
  std::vector<sandbox::EnvVar> env;
  if (sealed.empty()) return env;
  auto raw = base::Base64UrlDecode(sealed);
  if (!raw.ok()) return absl::DataLossError("sealed credentials are corrupt");
  auto plain = base::SecretBoxOpen(key_, *raw);
  if (!plain.ok()) return plain.status();
  nlohmann::json json = nlohmann::json::parse(*plain, nullptr, false);
  if (!json.is_object()) return absl::DataLossError("sealed credentials are corrupt");
  for (const auto& [name, value] : json.items()) {
    if (value.is_string()) env.push_back({name, value.get<std::string>()});
  }
  return env;
}

}  // namespace aevatar::chrono
