#ifndef AEVATAR_NYXID_BOOTSTRAP_BOOTSTRAP_H_
#define AEVATAR_NYXID_BOOTSTRAP_BOOTSTRAP_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nyxid/model.h"
#include "nyxid/store/nyxid_store.h"

// The bootstrap file seeds a broker's state; applying it again changes
// nothing that is already as described (see docs/nyxid.md for the format):
//   users         created when missing; an existing user's password hash and
//                 platform_admin follow the file
//   orgs          created when missing; member roles follow the file
//   catalog       inserted or replaced by id (operator-owned); a service of
//                 kind llm carries base_url, provider_api_key_file (read by
//                 LoadProviderKeys, sealed by the store) and model_allowlist
//   user_services created when the owner has no route with that slug; an
//                 existing route keeps its (possibly user-edited) state
//   clients       registered introspection clients (SHA-256 of their secret)
// then every user gets the auto-connected routes of auto_connect services.
namespace aevatar::nyxid {

struct BootstrapUser {
  std::string username;
  std::string password_hash;            // Argon2id string, preferred
  std::optional<std::string> password;  // plaintext, for development: hashed on load
  bool platform_admin = false;
};

struct BootstrapMember {
  std::string username;
  OrgRole role = OrgRole::kMember;
};

struct BootstrapOrg {
  std::string slug;
  std::string name;
  std::vector<BootstrapMember> members;
};

struct BootstrapRoute {
  OwnerKind owner_kind = OwnerKind::kUser;
  std::string owner;  // username or org slug
  std::optional<std::string> catalog_service_id;
  std::string base_url;  // custom services only
  std::string slug;      // default: the catalog slug
  std::string label;     // default: the slug
  bool active = true;
  std::optional<bool> forward_access_token;
  std::optional<bool> inject_delegation_token;
  std::optional<std::vector<std::string>> delegation_token_scope;
  bool auto_connected = false;
  bool credential_source_allowed = false;
  std::optional<std::string> node_id;
};

struct BootstrapSpec {
  std::vector<BootstrapUser> users;
  std::vector<BootstrapOrg> orgs;
  std::vector<CatalogService> catalog;
  std::vector<BootstrapRoute> user_services;
  std::vector<RegisteredClient> clients;
  // kLlm catalog services: catalog id -> provider_api_key_file as written.
  // LoadProviderKeys reads each into that service's provider_api_key.
  std::map<std::string, std::string> provider_api_key_files;
};

// Parses the YAML text. InvalidArgument names the offending entry (never a
// password or hash value).
absl::StatusOr<BootstrapSpec> ParseBootstrap(const std::string& yaml_text);

// Reads every provider_api_key_file of `spec` (a relative path is taken
// relative to `base_dir`, the bootstrap file's directory) into its catalog
// service's provider_api_key: the file's text without trailing whitespace,
// 1..4096 bytes of printable ASCII. InvalidArgument names the catalog entry,
// never the key.
absl::Status LoadProviderKeys(BootstrapSpec& spec, const std::string& base_dir);

// Applies `spec` to `store` idempotently. InvalidArgument when a kLlm
// catalog service has no provider key (LoadProviderKeys was not run).
absl::Status ApplyBootstrap(const BootstrapSpec& spec, NyxidStore& store, int64_t now_ms);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_BOOTSTRAP_BOOTSTRAP_H_
