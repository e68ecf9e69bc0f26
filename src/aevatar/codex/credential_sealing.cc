#include "aevatar/codex/credential_sealing.h"

#include "aevatar/vault/sealed_json.h"

namespace aevatar::orchestrator {

std::string SealManagedKey(const VaultKeyring& vault, const std::string& user_id,
                           const std::string& secret) {
  return SealJson(vault, nlohmann::json{{"user_id", user_id}, {"key", secret}});
}

absl::StatusOr<std::string> OpenManagedKey(const VaultKeyring& vault, const std::string& sealed,
                                           const std::string& user_id) {
  auto opened = OpenSealedJson(vault, sealed, "managed credential", {{"user_id", user_id}});
  if (!opened.ok()) return opened.status();
  if (!(*opened)["key"].is_string()) {
    return absl::DataLossError("the sealed managed credential is corrupt");
  }
  return (*opened)["key"].get<std::string>();
}

}  // namespace aevatar::orchestrator
