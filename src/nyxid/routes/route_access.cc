#include "nyxid/routes/route_access.h"

#include "base/api_error.h"
#include "nyxid/tokens/agent_keys.h"

namespace aevatar::nyxid {

std::optional<OrgRole> RoleIn(const Principal& caller, const std::string& org_id) {
  for (const Membership& membership : caller.memberships) {
    if (membership.org_id == org_id && membership.user_id == caller.user.id) {
      return membership.role;
    }
  }
  return std::nullopt;
}

bool CanSee(const Principal& caller, const UserService& route) {
  if (route.owner.kind == OwnerKind::kUser) return route.owner.id == caller.user.id;
  return RoleIn(caller, route.owner.id).has_value();
}

bool CanUse(const Principal& caller, const UserService& route) {
  if (route.owner.kind == OwnerKind::kUser) return route.owner.id == caller.user.id;
  return RoleIn(caller, route.owner.id).has_value() && route.credential_source_allowed;
}

bool CanWrite(const Principal& caller, const UserService& route) {
  if (route.auto_connected) return false;
  if (route.owner.kind == OwnerKind::kUser) return route.owner.id == caller.user.id;
  return RoleIn(caller, route.owner.id) == OrgRole::kAdmin;
}

absl::Status CheckVisible(const Principal& caller, const UserService& route) {
  if (CanSee(caller, route)) return absl::OkStatus();
  return base::ApiError(absl::StatusCode::kNotFound, "USER_SERVICE_NOT_FOUND",
                        "no such user service", 404);
}

absl::Status CheckUsable(const Principal& caller, const UserService& route) {
  if (absl::Status visible = CheckVisible(caller, route); !visible.ok()) return visible;
  if (CanUse(caller, route)) return absl::OkStatus();
  return base::Forbidden("ROUTE_USE_DENIED",
                         "the organisation does not allow its members to use this service");
}

absl::Status CheckWritable(const Principal& caller, const UserService& route) {
  if (absl::Status visible = CheckVisible(caller, route); !visible.ok()) return visible;
  if (route.auto_connected) {
    return base::Forbidden(
        "USER_SERVICE_AUTO_CONNECTED",
        "an auto-connected service is managed by the platform and cannot be changed");
  }
  if (CanWrite(caller, route)) return absl::OkStatus();
  return base::Forbidden("USER_SERVICE_WRITE_FORBIDDEN",
                         "only the owner or an organisation admin may change this service");
}

absl::Status CheckCredentialAllowed(const Principal& caller, const UserService& route) {
  switch (caller.kind) {
    case CredentialKind::kAccess:
      return absl::OkStatus();
    case CredentialKind::kAgentKey:
      if (caller.agent_key && AgentKeyAllowsRoute(*caller.agent_key, route)) {
        return absl::OkStatus();
      }
      return base::Forbidden("AGENT_KEY_SERVICE_NOT_ALLOWED",
                             "this agent key is not allowed to use this service");
    case CredentialKind::kDelegation:
      if (!caller.HasScope(kProxyScope)) {
        return base::Forbidden("TOKEN_SCOPE_MISSING",
                               "the delegation token lacks the scope proxy:*");
      }
      if (route.policy.inject_delegation_token) {
        return base::Forbidden(
            "DELEGATION_CANNOT_MINT",
            "a delegation token cannot be used to mint another delegation token");
      }
      return absl::OkStatus();
  }
  return base::Forbidden("CREDENTIAL_KIND_REJECTED", "this credential kind is not accepted");
}

absl::Status CheckDelegationAudience(const Principal& caller,
                                     const std::vector<std::string>& audiences) {
  if (caller.kind != CredentialKind::kDelegation) return absl::OkStatus();
  for (const std::string& audience : audiences) {
    if (audience == caller.audience) return absl::OkStatus();
  }
  return base::Forbidden("DELEGATION_AUDIENCE_NOT_ALLOWED",
                         "this delegation token was minted for another service, which may not "
                         "call this one");
}

absl::Status CheckSshCredential(const Principal& caller, const UserService& route) {
  switch (caller.kind) {
    case CredentialKind::kAccess:
      return absl::OkStatus();
    case CredentialKind::kAgentKey:
      // Only a key its owner pointed at this very service: a key handed to a
      // program for other work (code_execute gives one to sandboxed code)
      // must not reach the owner's host.
      if (caller.agent_key && !caller.agent_key->allowed_services.empty() &&
          AgentKeyAllowsRoute(*caller.agent_key, route)) {
        return absl::OkStatus();
      }
      return base::Forbidden("SSH_CREDENTIAL_NOT_ALLOWED",
                             "an SSH service takes a human access token, or an Agent Key "
                             "restricted to that service");
    case CredentialKind::kDelegation:
      break;
  }
  return base::Forbidden("SSH_CREDENTIAL_NOT_ALLOWED",
                         "an SSH service takes a human access token, or an Agent Key restricted "
                         "to that service; never a delegation token");
}

absl::Status RequirePlatformAdmin(const Principal& caller, const std::string& what) {
  if (caller.kind == CredentialKind::kAccess && caller.user.platform_admin) return absl::OkStatus();
  return base::Forbidden("PLATFORM_ADMIN_REQUIRED", "only a platform admin may " + what);
}

absl::Status RequireHumanToken(const Principal& caller) {
  if (caller.kind == CredentialKind::kAccess) return absl::OkStatus();
  return base::Forbidden("HUMAN_TOKEN_REQUIRED",
                         "this operation requires a human access token, not an agent key or a "
                         "delegation token");
}

absl::Status RequireAccountRead(const Principal& caller) {
  if (caller.kind != CredentialKind::kDelegation || caller.HasScope(kAccountReadScope)) {
    return absl::OkStatus();
  }
  return base::Forbidden("TOKEN_SCOPE_MISSING",
                         "the delegation token lacks the scope account:read");
}

}  // namespace aevatar::nyxid
