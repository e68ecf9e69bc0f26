#include "aevatar/vault/sealed_json.h"

#include "absl/strings/str_cat.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {

std::string SealJson(const VaultKeyring& keyring, const nlohmann::json& object) {
  return keyring.Seal(object.dump());
}

absl::StatusOr<nlohmann::json> OpenSealedJson(const VaultKeyring& keyring, std::string_view sealed,
                                              const char* what,
                                              std::initializer_list<SealedBinding> bindings) {
  auto opened = keyring.Open(sealed);
  if (!opened.ok()) return absl::DataLossError(absl::StrCat("the sealed ", what, " does not open"));
  auto object = base::ParseJsonObject(*opened);
  if (!object.ok()) return absl::DataLossError(absl::StrCat("the sealed ", what, " is corrupt"));
  for (const auto& [name, expected] : bindings) {
    auto actual = base::RequiredString(*object, name);
    if (!actual.ok() || *actual != expected) {
      return absl::DataLossError(absl::StrCat("the sealed ", what, " belongs to another row"));
    }
  }
  return object;
}

}  // namespace aevatar::orchestrator
