#ifndef AEVATAR_NYXID_MODEL_H_
#define AEVATAR_NYXID_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

// The broker's records: accounts, organisations, catalog services, the
// UserService routes callers use through the proxy, and Agent Keys.
//
// Ids are opaque (base::RandomId with a type prefix: "usr_", "org_", "us_",
// "ak_"); catalog ids are chosen by the operator in the bootstrap file. A
// UserService id is never a catalog id, so a catalog id in a UserService path
// is simply not found.
namespace aevatar::nyxid {

enum class OrgRole { kAdmin, kMember, kViewer };

std::string_view OrgRoleName(OrgRole role);
// "admin", "member", "viewer"; anything else is InvalidArgument.
absl::StatusOr<OrgRole> ParseOrgRole(std::string_view name);

struct User {
  std::string id;
  std::string username;
  std::string password_hash;  // Argon2id (libsodium's crypto_pwhash_str); never leaves the store
  bool platform_admin = false;
  int64_t created_at_ms = 0;
  // Tokens (access and delegation) issued before this are revoked: set by
  // logout and by a password change.
  int64_t tokens_not_before_ms = 0;
};

struct Org {
  std::string id;
  std::string slug;
  std::string name;
};

struct Membership {
  std::string org_id;
  std::string user_id;
  OrgRole role = OrgRole::kMember;
};

// How a route delivers credentials upstream. `delegation_token_scope` is a
// set: stored normalised (sorted, unique) and rendered space-separated.
struct CredentialPolicy {
  bool forward_access_token = false;
  bool inject_delegation_token = false;
  std::vector<std::string> delegation_token_scope;
};

// The kind of upstream a catalog service is. HTTP and LLM services are
// proxied; "ssh" services (node-relayed) are recorded for the later node issue.
//   kHttp  any method and path, the route's credential policy applies;
//   kLlm   a model provider's Responses API (chrono-llm-public): only
//          POST …/responses with an allowlisted `model`, and upstream gets the
//          operator's provider key instead of any caller credential
//          (proxy/llm_route.h).
enum class ServiceKind { kHttp, kSsh, kLlm };
std::string_view ServiceKindName(ServiceKind kind);
absl::StatusOr<ServiceKind> ParseServiceKind(std::string_view name);

// A platform-defined service (chrono-sandbox, chrono-llm-public, …).
struct CatalogService {
  std::string id;    // operator-chosen, e.g. "cat_chrono_sandbox"
  std::string slug;  // proxy path segment and the delegation token's aud
  std::string name;  // human-readable
  ServiceKind kind = ServiceKind::kHttp;
  std::string base_url;  // upstream, http://host:port[/prefix]
  CredentialPolicy default_policy;
  // kLlm only. The operator's provider API key, in the clear only in memory:
  // the store seals it at rest, and no response, log line or error carries it.
  std::string provider_api_key;
  // kLlm only. The `model` values a request may name; empty refuses every model.
  std::vector<std::string> model_allowlist;
  // When true every user gets a personal auto-connected route to it, kept in
  // step with `default_policy` by resync-identity.
  bool auto_connect = false;
  // The catalog slugs whose delegation tokens may call this service's routes
  // through the proxy: a delegation token is bound to its `aud`, so only a
  // service named here may call back on its caller's behalf (chrono-llm-public
  // names chrono-sandbox, whose managed Codex runs call the model with the
  // token NyxID minted for them). Empty: no delegation token may.
  std::vector<std::string> delegation_audiences;
  // Whether base_url may name or resolve to a link-local or cloud-metadata
  // address (proxy/upstream_address.h); refused otherwise.
  bool allow_link_local = false;
};

enum class OwnerKind { kUser, kOrg };
std::string_view OwnerKindName(OwnerKind kind);

struct Owner {
  OwnerKind kind = OwnerKind::kUser;
  std::string id;  // a user id or an org id
  bool operator==(const Owner&) const = default;
};

// A route a caller uses through the proxy (DESIGN §7).
struct UserService {
  std::string id;
  std::string slug;                               // what /api/v1/proxy/{slug}/ must name exactly
  std::string label;                              // readable; unique per owner like the slug
  std::optional<std::string> catalog_service_id;  // nullopt: a custom service
  Owner owner;
  bool active = true;
  CredentialPolicy policy;
  bool auto_connected = false;             // platform-managed; never writable by users
  bool credential_source_allowed = false;  // may org members use it
  std::optional<std::string> node_id;      // a node relays it (SSH; later issue)
  std::string base_url;                    // custom services only; catalog ones use the catalog's
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

// An Agent Key as stored: only the SHA-256 of the key, never the key.
struct AgentKeyRecord {
  std::string id;
  std::string user_id;
  std::string label;
  std::string key_hash_hex;  // SHA-256 of the whole "nyxid_ag_…" string
  std::string key_prefix;    // first characters, to recognise a key in lists
  // UserService ids or slugs this key may use through the proxy; empty: any
  // route its user may use.
  std::vector<std::string> allowed_services;
  int64_t created_at_ms = 0;
  std::optional<int64_t> revoked_at_ms;
};

// A client registered to call introspection (chrono-sandbox, aevatar): the
// store keeps the SHA-256 of its bearer secret.
struct RegisteredClient {
  std::string name;
  std::string secret_sha256_hex;
};

// One entry of the append-only admin audit log: who changed which account,
// org membership, catalog service, route, node or key, and when. `detail` is
// a JSON object of names, ids and flags, never a secret.
struct AdminAuditEntry {
  int64_t seq = 0;  // assigned on append, increasing
  int64_t at_ms = 0;
  std::string actor;   // a user id, or "bootstrap" for the operator's seed file
  std::string action;  // "route.created", "account.password_changed", …
  std::string target_type;
  std::string target_id;
  std::string detail = "{}";
};

// Scope sets: parse a space-separated list into a sorted, de-duplicated
// vector, and render it back.
std::vector<std::string> NormalizeScopes(std::string_view space_separated);
std::vector<std::string> NormalizeScopes(const std::vector<std::string>& scopes);
std::string JoinScopes(const std::vector<std::string>& scopes);

// True for slugs of 1..63 characters [a-z0-9-], starting with a letter or digit.
bool IsValidSlug(std::string_view slug);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_MODEL_H_
