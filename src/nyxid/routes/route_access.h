#ifndef AEVATAR_NYXID_ROUTES_ROUTE_ACCESS_H_
#define AEVATAR_NYXID_ROUTES_ROUTE_ACCESS_H_

#include <optional>

#include "absl/status/status.h"
#include "nyxid/accounts/principal.h"
#include "nyxid/model.h"

// Who may see, use and change a UserService. Pure functions of the caller's
// identity and memberships and the route; the one place these rules live.
//
//               | personal route      | org route
//   see         | owner               | any member of the org (admin, member, viewer)
//   use (proxy) | owner               | any member, only when credential_source.allowed
//   write (PUT) | owner               | org admin
//
// An auto-connected route is never writable by users. A caller who cannot
// see a route gets 404 for it (its existence is not disclosed); one who can
// see it but not use or change it gets 403.
namespace aevatar::nyxid {

// The caller's role in `org_id`, if a member.
std::optional<OrgRole> RoleIn(const Principal& caller, const std::string& org_id);

bool CanSee(const Principal& caller, const UserService& route);
bool CanUse(const Principal& caller, const UserService& route);
bool CanWrite(const Principal& caller, const UserService& route);

// Typed checks: NotFound USER_SERVICE_NOT_FOUND when not visible;
// PermissionDenied ROUTE_USE_DENIED / USER_SERVICE_WRITE_FORBIDDEN /
// USER_SERVICE_AUTO_CONNECTED otherwise.
absl::Status CheckVisible(const Principal& caller, const UserService& route);
absl::Status CheckUsable(const Principal& caller, const UserService& route);
absl::Status CheckWritable(const Principal& caller, const UserService& route);

// Whether the caller's credential (not only the caller) may go through the
// proxy on `route`:
//   AgentKey: the key's allowed_services must admit the route
//             (403 AGENT_KEY_SERVICE_NOT_ALLOWED);
//   delegation: needs scope proxy:* (403 TOKEN_SCOPE_MISSING) and cannot
//             make the proxy mint another delegation token
//             (403 DELEGATION_CANNOT_MINT);
//   access token: allowed.
absl::Status CheckCredentialAllowed(const Principal& caller, const UserService& route);

// Whether a delegation token may call a route whose service admits the
// delegation tokens of `audiences` (CatalogService::delegation_audiences; a
// custom route admits none): its aud must be one of them, so a token minted
// for one service cannot be replayed against another of its user's routes
// (403 DELEGATION_AUDIENCE_NOT_ALLOWED). Other credentials pass.
absl::Status CheckDelegationAudience(const Principal& caller,
                                     const std::vector<std::string>& audiences);

// Whether the credential may run an SSH service (a user's own host): a
// human access token, or an Agent Key whose allowed_services names the
// service (an unrestricted key is refused); never a delegation token, which
// sandboxed code may hold (403 SSH_CREDENTIAL_NOT_ALLOWED).
absl::Status CheckSshCredential(const Principal& caller, const UserService& route);

// Whether the caller is a platform admin presenting a human access token
// (403 PLATFORM_ADMIN_REQUIRED, saying "only a platform admin may <what>").
absl::Status RequirePlatformAdmin(const Principal& caller, const std::string& what);

// Whether the credential may change routes or keys: only a human access
// token (403 HUMAN_TOKEN_REQUIRED otherwise).
absl::Status RequireHumanToken(const Principal& caller);

// Whether the credential may read the account inventory: access tokens and
// Agent Keys may; a delegation token needs account:read (403 TOKEN_SCOPE_MISSING).
absl::Status RequireAccountRead(const Principal& caller);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_ROUTES_ROUTE_ACCESS_H_
