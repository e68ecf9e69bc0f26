#ifndef AEVATAR_AEVATAR_VAULT_SEALED_JSON_H_
#define AEVATAR_AEVATAR_VAULT_SEALED_JSON_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "aevatar/vault/vault_keyring.h"
#include "nlohmann/json.hpp"

// The one way aevatar seals a JSON object at rest and opens it again: the
// credential vault, the approval store and the workflow runtime's material.
// A value may be bound to the row that holds it (its owner, its id): those
// fields are sealed with it and checked on opening, so a sealed value moved
// to another row does not open.
namespace aevatar::orchestrator {

// A sealed field that must equal the row's own value: {name, expected}.
using SealedBinding = std::pair<std::string_view, std::string_view>;

// Seals `object` (a JSON object) under the keyring's current key.
std::string SealJson(const VaultKeyring& keyring, const nlohmann::json& object);

// Opens `sealed` as a JSON object whose string fields match `bindings`.
// DataLoss (naming `what`, never a value) when it does not open under the
// keyring, is not a JSON object, or belongs to another row.
absl::StatusOr<nlohmann::json> OpenSealedJson(const VaultKeyring& keyring, std::string_view sealed,
                                              const char* what,
                                              std::initializer_list<SealedBinding> bindings = {});

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_VAULT_SEALED_JSON_H_
