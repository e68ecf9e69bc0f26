// Parsing of the bootstrap YAML (yaml-cpp exceptions stay in this file), and
// reading the provider key files it names.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "nyxid/bootstrap/bootstrap.h"
#include "nyxid/proxy/upstream_address.h"

namespace aevatar::nyxid {
namespace {

absl::Status Invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("bootstrap ", where, ": ", what));
}

std::string Str(const YAML::Node& node, const char* key, const std::string& fallback = "") {
  const YAML::Node value = node[key];
  return value && value.IsScalar() ? value.as<std::string>() : fallback;
}

std::optional<bool> OptBool(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  if (!value || value.IsNull()) return std::nullopt;
  return value.as<bool>();
}

// A scope set given as "a b c" or as a list.
std::optional<std::vector<std::string>> OptScopes(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  if (!value || value.IsNull()) return std::nullopt;
  if (value.IsSequence()) return NormalizeScopes(value.as<std::vector<std::string>>());
  return NormalizeScopes(value.as<std::string>());
}

constexpr size_t kMaxProviderKeyBytes = 4096;

// An upstream base URL: http:// (loopback, a private network) or https://
// (verified TLS: the system trust store plus `nyxid serve --upstream-ca-file`).
bool IsUpstreamUrl(const std::string& url) {
  return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

// The llm-only fields: the provider key file and the model allowlist (a list
// of non-empty names; absent = empty = every model refused).
absl::Status ParseLlmFields(const YAML::Node& node, const std::string& where,
                            CatalogService& service, std::string& key_file) {
  const YAML::Node models = node["model_allowlist"];
  key_file = Str(node, "provider_api_key_file");
  if (service.kind != ServiceKind::kLlm) {
    if (models || node["provider_api_key_file"]) {
      return Invalid(where, "provider_api_key_file and model_allowlist are for kind llm only");
    }
    return absl::OkStatus();
  }
  if (key_file.empty()) return Invalid(where, "a kind llm service needs provider_api_key_file");
  if (models && !models.IsNull()) {
    if (!models.IsSequence()) return Invalid(where, "model_allowlist must be a list of names");
    for (const YAML::Node& model : models) {
      if (!model.IsScalar() || model.Scalar().empty()) {
        return Invalid(where, "model_allowlist must be a list of non-empty names");
      }
      service.model_allowlist.push_back(model.Scalar());
    }
  }
  if (service.default_policy.forward_access_token ||
      service.default_policy.inject_delegation_token) {
    return Invalid(where, "a kind llm service never forwards or mints caller credentials");
  }
  return absl::OkStatus();
}

absl::StatusOr<CatalogService> ParseCatalog(const YAML::Node& node, size_t index,
                                            std::string& key_file) {
  const std::string where = absl::StrCat("catalog[", index, "]");
  CatalogService service;
  service.id = Str(node, "id");
  service.slug = Str(node, "slug");
  service.name = Str(node, "name", service.slug);
  service.base_url = Str(node, "base_url");
  if (service.id.empty()) return Invalid(where, "id is required");
  if (!IsValidSlug(service.slug)) return Invalid(where, "slug must be [a-z0-9-], 1..63");
  auto kind = ParseServiceKind(Str(node, "kind", "http"));
  if (!kind.ok()) return Invalid(where, "kind must be http, llm or ssh");
  service.kind = *kind;
  if (service.kind != ServiceKind::kSsh && !IsUpstreamUrl(service.base_url)) {
    return Invalid(where, "base_url must be an http:// or https:// URL");
  }
  const YAML::Node policy = node["default_policy"] ? node["default_policy"] : node;
  service.default_policy.forward_access_token =
      OptBool(policy, "forward_access_token").value_or(false);
  service.default_policy.inject_delegation_token =
      OptBool(policy, "inject_delegation_token").value_or(false);
  service.default_policy.delegation_token_scope =
      OptScopes(policy, "delegation_token_scope").value_or(std::vector<std::string>{});
  service.auto_connect = OptBool(node, "auto_connect").value_or(false);
  service.allow_link_local = OptBool(node, "allow_link_local").value_or(false);
  if (absl::Status st = CheckUpstreamLiteral(service.base_url, service.allow_link_local);
      !st.ok()) {
    return Invalid(where, std::string(st.message()));
  }
  if (const YAML::Node audiences = node["delegation_audiences"]; audiences && !audiences.IsNull()) {
    if (!audiences.IsSequence()) return Invalid(where, "delegation_audiences must be a list");
    for (const YAML::Node& audience : audiences) {
      if (!audience.IsScalar() || !IsValidSlug(audience.Scalar())) {
        return Invalid(where, "delegation_audiences must be a list of catalog slugs");
      }
      service.delegation_audiences.push_back(audience.Scalar());
    }
  }
  if (absl::Status st = ParseLlmFields(node, where, service, key_file); !st.ok()) return st;
  return service;
}

absl::StatusOr<BootstrapRoute> ParseRoute(const YAML::Node& node, size_t index) {
  const std::string where = absl::StrCat("user_services[", index, "]");
  BootstrapRoute route;
  const YAML::Node owner = node["owner"];
  if (owner && owner.IsMap() && owner["user"]) {
    route.owner_kind = OwnerKind::kUser;
    route.owner = owner["user"].as<std::string>();
  } else if (owner && owner.IsMap() && owner["org"]) {
    route.owner_kind = OwnerKind::kOrg;
    route.owner = owner["org"].as<std::string>();
  } else {
    return Invalid(where, "owner must be {user: USERNAME} or {org: ORG_SLUG}");
  }
  if (node["catalog_service_id"] && !node["catalog_service_id"].IsNull()) {
    route.catalog_service_id = node["catalog_service_id"].as<std::string>();
  }
  route.base_url = Str(node, "base_url");
  if (!route.catalog_service_id && !IsUpstreamUrl(route.base_url)) {
    return Invalid(
        where, "a custom service (no catalog_service_id) needs an http:// or https:// base_url");
  }
  if (!CheckUpstreamLiteral(route.base_url, /*allow_link_local=*/false).ok()) {
    return Invalid(where,
                   "a custom service's base_url cannot be link-local or a metadata address "
                   "(only a catalog service may allow it)");
  }
  route.slug = Str(node, "slug");
  route.label = Str(node, "label");
  if (!route.slug.empty() && !IsValidSlug(route.slug)) {
    return Invalid(where, "slug must be [a-z0-9-], 1..63");
  }
  if (!route.catalog_service_id && route.slug.empty()) {
    return Invalid(where, "a custom service needs a slug");
  }
  route.active = OptBool(node, "active").value_or(true);
  route.forward_access_token = OptBool(node, "forward_access_token");
  route.inject_delegation_token = OptBool(node, "inject_delegation_token");
  route.delegation_token_scope = OptScopes(node, "delegation_token_scope");
  route.auto_connected = OptBool(node, "auto_connected").value_or(false);
  const YAML::Node source = node["credential_source"];
  route.credential_source_allowed =
      (source && source.IsMap() ? OptBool(source, "allowed") : OptBool(node, "allowed"))
          .value_or(false);
  if (node["node_id"] && !node["node_id"].IsNull())
    route.node_id = node["node_id"].as<std::string>();
  return route;
}

absl::StatusOr<BootstrapSpec> ParseDocument(const YAML::Node& root) {
  BootstrapSpec spec;
  if (!root || root.IsNull()) return spec;
  if (!root.IsMap()) return Invalid("file", "the top level must be a mapping");
  size_t index = 0;
  for (const YAML::Node& node : root["users"]) {
    const std::string where = absl::StrCat("users[", index++, "]");
    BootstrapUser user;
    user.username = Str(node, "username");
    if (user.username.empty()) return Invalid(where, "username is required");
    user.password_hash = Str(node, "password_hash");
    if (node["password"]) user.password = node["password"].as<std::string>();
    if (user.password_hash.empty() && !user.password) {
      return Invalid(where, "password_hash (Argon2id) or password is required");
    }
    if (!user.password_hash.empty() && user.password_hash.rfind("$argon2id$", 0) != 0) {
      return Invalid(where, "password_hash must be an Argon2id hash ($argon2id$…)");
    }
    user.platform_admin = OptBool(node, "platform_admin").value_or(false);
    spec.users.push_back(std::move(user));
  }
  index = 0;
  for (const YAML::Node& node : root["orgs"]) {
    const std::string where = absl::StrCat("orgs[", index++, "]");
    BootstrapOrg org;
    org.slug = Str(node, "slug");
    org.name = Str(node, "name", org.slug);
    if (!IsValidSlug(org.slug)) return Invalid(where, "slug must be [a-z0-9-], 1..63");
    for (const YAML::Node& member : node["members"]) {
      auto role = ParseOrgRole(Str(member, "role", "member"));
      if (!role.ok()) return Invalid(where, "a member role is admin, member or viewer");
      org.members.push_back({Str(member, "username"), *role});
    }
    spec.orgs.push_back(std::move(org));
  }
  index = 0;
  for (const YAML::Node& node : root["catalog"]) {
    std::string key_file;
    auto service = ParseCatalog(node, index++, key_file);
    if (!service.ok()) return service.status();
    if (!key_file.empty()) spec.provider_api_key_files[service->id] = key_file;
    spec.catalog.push_back(std::move(*service));
  }
  index = 0;
  for (const YAML::Node& node : root["user_services"]) {
    auto route = ParseRoute(node, index++);
    if (!route.ok()) return route.status();
    spec.user_services.push_back(std::move(*route));
  }
  index = 0;
  for (const YAML::Node& node : root["clients"]) {
    const std::string where = absl::StrCat("clients[", index++, "]");
    RegisteredClient client{Str(node, "name"), Str(node, "secret_sha256")};
    if (client.name.empty() || client.secret_sha256_hex.size() != 64) {
      return Invalid(where, "name and secret_sha256 (64 hex digits) are required");
    }
    spec.clients.push_back(std::move(client));
  }
  return spec;
}

absl::StatusOr<std::string> ReadProviderKey(const std::string& path, const std::string& where) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Invalid(where, "cannot read provider_api_key_file");
  std::ostringstream text;
  text << in.rdbuf();
  std::string key = text.str();
  key.erase(std::find_if(key.rbegin(), key.rend(),
                         [](unsigned char c) { return !absl::ascii_isspace(c); })
                .base(),
            key.end());
  // Printable ASCII only: the key becomes an Authorization header value.
  const bool printable =
      std::all_of(key.begin(), key.end(), [](unsigned char c) { return c > 0x20 && c < 0x7f; });
  if (key.empty() || key.size() > kMaxProviderKeyBytes || !printable) {
    return Invalid(where,
                   "provider_api_key_file must hold one key of 1..4096 printable characters");
  }
  return key;
}

}  // namespace

absl::Status LoadProviderKeys(BootstrapSpec& spec, const std::string& base_dir) {
  for (CatalogService& service : spec.catalog) {
    auto file = spec.provider_api_key_files.find(service.id);
    if (file == spec.provider_api_key_files.end()) continue;
    std::string path = file->second;
    if (path.front() != '/') path = absl::StrCat(base_dir.empty() ? "." : base_dir, "/", path);
    auto key = ReadProviderKey(path, "catalog " + service.id);
    if (!key.ok()) return key.status();
    service.provider_api_key = std::move(*key);
  }
  return absl::OkStatus();
}

absl::StatusOr<BootstrapSpec> ParseBootstrap(const std::string& yaml_text) {
  try {
    return ParseDocument(YAML::Load(yaml_text));
  } catch (const YAML::Exception& e) {
    // yaml-cpp messages cite positions, not values.
    return absl::InvalidArgumentError(absl::StrCat("bootstrap file: ", e.what()));
  }
}

}  // namespace aevatar::nyxid
