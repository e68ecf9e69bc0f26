#ifndef AEVATAR_AEVATAR_ROUTES_ROUTE_INVENTORY_H_
#define AEVATAR_AEVATAR_ROUTES_ROUTE_INVENTORY_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

// The NyxID facts that code_execute route selection works from, parsed from
// the caller-visible typed inventory (GET /api/v1/keys) and the caller's own
// identity (GET /api/v1/me). Parsing is strict: a response that does not
// carry a field the selection depends on is rejected rather than guessed,
// because a defaulted field could widen access (fail closed).
namespace aevatar::orchestrator {

// One UserService as NyxID's GET /api/v1/keys reports it to this caller.
struct RouteFacts {
  std::string id, slug, label;
  std::optional<std::string> catalog_service_id;  // null for custom services
  std::string owner_type;                         // "user" | "org"
  std::string owner_id;
  bool active = false;
  bool forward_access_token = false;
  bool inject_delegation_token = false;
  // Parsed from the space-separated delegation_token_scope; order kept,
  // duplicates kept as observed.
  std::vector<std::string> scopes;
  bool auto_connected = false;
  bool credential_source_allowed = false;
  std::optional<std::string> node_id;
};

// The caller as NyxID's GET /api/v1/me reports it.
struct CallerFacts {
  std::string user_id;
  std::map<std::string, std::string> org_roles;  // org id -> "admin" | "member" | "viewer"
};

// Parses {"keys":[{...}]}. Each entry needs: id (non-empty string), slug,
// label, owner {type "user"|"org", id}, active, forward_access_token,
// inject_delegation_token, delegation_token_scope (a space-separated string),
// auto_connected, credential_source {allowed}. catalog_service_id and node_id
// are a string or null (absent reads as null). Unknown fields are ignored.
// Returns InvalidArgument naming the first malformed field. Never throws.
absl::StatusOr<std::vector<RouteFacts>> ParseKeysInventory(const nlohmann::json& body);

// Parses /api/v1/me: {"id": …, "orgs": [{"id": …, "role": …}]}. "orgs" may be
// absent (no memberships); each role must be admin, member or viewer and an
// org may appear once. Unknown fields are ignored. Returns InvalidArgument
// naming the first malformed field. Never throws.
absl::StatusOr<CallerFacts> ParseCallerFacts(const nlohmann::json& body);

// Splits a space-separated scope string (any ASCII whitespace) into scopes,
// keeping order and duplicates, dropping empty parts.
std::vector<std::string> SplitScopes(const std::string& space_separated);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ROUTES_ROUTE_INVENTORY_H_
