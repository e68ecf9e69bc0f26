#include "aevatar/routes/route_convergence.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_join.h"
#include "aevatar/routes/route_resolution.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kRejectedRemediation[] =
    "Ask the chrono-sandbox route's owner (an organisation admin, or the operator for the "
    "platform route) to grant forward_access_token, inject_delegation_token and the proxy:* and "
    "sandbox:execute scopes; retrying the same repair cannot succeed.";
constexpr char kUnverifiedRemediation[] =
    "Retry the request; NyxID did not confirm the chrono-sandbox route repair.";
constexpr char kWriteAuthorityRemediation[] =
    "Ask an admin of the organisation that owns the chrono-sandbox route to enable "
    "forward_access_token, inject_delegation_token and the proxy:* and sandbox:execute scopes.";

// How a write's answer is classified. 409 is kept apart because on create it
// means a concurrent create (re-read), while on update it is a plain refusal.
enum class WriteClass { kAccepted, kConflict, kRejected, kUnverified };

WriteClass Classify(int http_status) {
  if (http_status >= 200 && http_status < 300) return WriteClass::kAccepted;
  if (http_status == 409) return WriteClass::kConflict;
  // 408 and 429 say "not now", not "never": retrying may succeed.
  if (http_status == 408 || http_status == 429) return WriteClass::kUnverified;
  if (http_status >= 400 && http_status < 500) return WriteClass::kRejected;
  return WriteClass::kUnverified;  // 0 (transport), 5xx, and anything unexpected
}

ConvergenceResult Result(ConvergenceOutcome outcome, int writes) {
  ConvergenceResult result;
  result.outcome = outcome;
  result.writes = writes;
  switch (outcome) {
    case ConvergenceOutcome::kRepairRejected:
      result.code = kRepairRejectedCode;
      result.remediation = kRejectedRemediation;
      break;
    case ConvergenceOutcome::kRepairUnverified:
      result.code = kRepairUnverifiedCode;
      result.remediation = kUnverifiedRemediation;
      break;
    case ConvergenceOutcome::kBlockedWriteAuthority:
      result.code = kWriteAuthorityRequiredCode;
      result.remediation = kWriteAuthorityRemediation;
      break;
    default:
      break;
  }
  return result;
}

ConvergenceResult Verified(ConvergenceOutcome outcome, int writes, std::string route_id) {
  ConvergenceResult result = Result(outcome, writes);
  result.route_id = std::move(route_id);
  return result;
}

bool Contains(const std::vector<std::string>& scopes, const std::string& scope) {
  return std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
}

// `scopes` without duplicates, first-seen order kept.
std::vector<std::string> Unique(const std::vector<std::string>& scopes) {
  std::vector<std::string> out;
  for (const std::string& scope : scopes) {
    if (!Contains(out, scope)) out.push_back(scope);
  }
  return out;
}

bool HasEveryScope(const RouteFacts& route, const std::vector<std::string>& scopes) {
  return std::all_of(scopes.begin(), scopes.end(),
                     [&](const std::string& scope) { return Contains(route.scopes, scope); });
}

bool CallerMayWrite(const RouteFacts& route, const CallerFacts& caller) {
  if (route.owner_type == "user") return route.owner_id == caller.user_id;
  if (route.owner_type != "org") return false;
  auto role = caller.org_roles.find(route.owner_id);
  return role != caller.org_roles.end() && role->second == "admin";
}

const RouteFacts* FindById(const std::vector<RouteFacts>& inventory, const std::string& id) {
  for (const RouteFacts& route : inventory) {
    if (route.id == id) return &route;
  }
  return nullptr;
}

// A compliant alias of this caller: personal, canonical, not platform-owned,
// active and satisfying the whole policy.
bool IsCompliantAlias(const RouteFacts& route, const CallerFacts& caller,
                      const std::string& chrono_catalog_id) {
  return route.owner_type == "user" && route.owner_id == caller.user_id &&
         route.catalog_service_id == chrono_catalog_id && !route.auto_connected && route.active &&
         !GapsOf(route).any();
}

// PUT the minimal patch on `route`, then admit only what the readback proves:
// the same id, the same catalog identity, the policy, and every scope it had.
ConvergenceResult PatchAndVerify(RouteWriter& nyxid, const RouteFacts& route) {
  const NyxidWriteResult written = nyxid.PatchUserService(route.id, MinimalPolicyPatch(route));
  switch (Classify(written.http_status)) {
    case WriteClass::kAccepted:
      break;
    case WriteClass::kConflict:
    case WriteClass::kRejected:
      return Result(ConvergenceOutcome::kRepairRejected, 1);
    case WriteClass::kUnverified:
      return Result(ConvergenceOutcome::kRepairUnverified, 1);
  }
  auto reread = nyxid.ReadInventory();
  if (!reread.ok()) return Result(ConvergenceOutcome::kRepairUnverified, 1);
  const RouteFacts* after = FindById(*reread, route.id);
  if (after == nullptr || after->catalog_service_id != route.catalog_service_id ||
      GapsOf(*after).any() || !HasEveryScope(*after, route.scopes)) {
    return Result(ConvergenceOutcome::kRepairUnverified, 1);
  }
  return Verified(ConvergenceOutcome::kPatched, 1, route.id);
}

// The platform route is NyxID's to reconcile, so the caller gets a personal
// alias with the full contract instead.
ConvergenceResult CreateAliasAndVerify(RouteWriter& nyxid, const RouteFacts& platform,
                                       const CallerFacts& caller,
                                       const std::string& chrono_catalog_id) {
  const NyxidWriteResult written = nyxid.CreateUserService(AliasCreateBody(platform));
  const WriteClass write_class = Classify(written.http_status);
  if (write_class == WriteClass::kRejected) return Result(ConvergenceOutcome::kRepairRejected, 1);
  if (write_class == WriteClass::kUnverified) {
    return Result(ConvergenceOutcome::kRepairUnverified, 1);
  }
  auto reread = nyxid.ReadInventory();
  if (!reread.ok()) return Result(ConvergenceOutcome::kRepairUnverified, 1);

  if (write_class == WriteClass::kConflict) {
    // A concurrent admission created it first; use it only if it is compliant.
    for (const RouteFacts& route : *reread) {
      if (route.slug == kAliasSlug && IsCompliantAlias(route, caller, chrono_catalog_id)) {
        return Verified(ConvergenceOutcome::kAliasRaced, 1, route.id);
      }
    }
    return Result(ConvergenceOutcome::kRepairUnverified, 1);
  }

  // Prefer the id NyxID answered with; fall back to the alias slug.
  const RouteFacts* alias = nullptr;
  const auto answered_id = base::OptionalString(written.body, "id");
  if (answered_id.ok() && answered_id->has_value()) {
    alias = FindById(*reread, **answered_id);
  } else {
    for (const RouteFacts& route : *reread) {
      if (route.slug == kAliasSlug && route.owner_type == "user" &&
          route.owner_id == caller.user_id) {
        alias = &route;
      }
    }
  }
  if (alias == nullptr || alias->slug != kAliasSlug ||
      !IsCompliantAlias(*alias, caller, chrono_catalog_id) ||
      !HasEveryScope(*alias, platform.scopes) ||
      (platform.node_id.has_value() && alias->node_id != platform.node_id)) {
    return Result(ConvergenceOutcome::kRepairUnverified, 1);
  }
  return Verified(ConvergenceOutcome::kAliasCreated, 1, alias->id);
}

}  // namespace

nlohmann::json MinimalPolicyPatch(const RouteFacts& route) {
  std::vector<std::string> scopes = Unique(route.scopes);
  for (const char* required : {kProxyScope, kSandboxExecuteScope}) {
    if (!Contains(scopes, required)) scopes.emplace_back(required);
  }
  return {{"forward_access_token", true},
          {"inject_delegation_token", true},
          {"delegation_token_scope", absl::StrJoin(scopes, " ")}};
}

nlohmann::json AliasCreateBody(const RouteFacts& platform) {
  std::vector<std::string> scopes = {kProxyScope, kSandboxExecuteScope};
  for (const std::string& scope : platform.scopes) {
    if (!Contains(scopes, scope)) scopes.push_back(scope);
  }
  nlohmann::json body = {{"slug", kAliasSlug},
                         {"label", kAliasLabel},
                         {"catalog_service_id", platform.catalog_service_id.value_or("")},
                         {"forward_access_token", true},
                         {"inject_delegation_token", true},
                         {"delegation_token_scope", absl::StrJoin(scopes, " ")}};
  if (platform.node_id.has_value()) body["node_id"] = *platform.node_id;
  return body;
}

ConvergenceResult ConvergeCodeExecutionRoute(RouteWriter& nyxid, const CallerFacts& caller,
                                             bool has_write_authority,
                                             const std::string& chrono_catalog_id) {
  // Without a verified human token not even the read is made: nothing here
  // could be acted on, and readiness/execution do their own reads.
  if (!has_write_authority) return Result(ConvergenceOutcome::kNoWriteAuthority, 0);

  auto inventory = nyxid.ReadInventory();
  if (!inventory.ok()) return Result(ConvergenceOutcome::kRepairUnverified, 0);

  const RouteResolution resolved = ResolveCodeExecutionRoute(*inventory, caller, chrono_catalog_id);
  if (resolved.outcome == ResolutionOutcome::kReady) {
    return Verified(ConvergenceOutcome::kNotNeeded, 0, resolved.route->id);
  }
  // Missing, inactive, denied or ambiguous routes are not fixed by a policy
  // patch; convergence never picks among several candidates.
  if (resolved.outcome != ResolutionOutcome::kPolicyMismatch) {
    return Result(ConvergenceOutcome::kNotApplicable, 0);
  }
  const std::vector<RouteFacts> candidates =
      ActiveCandidates(*inventory, caller, chrono_catalog_id);
  if (candidates.size() != 1) return Result(ConvergenceOutcome::kNotApplicable, 0);
  const RouteFacts& candidate = candidates.front();

  if (candidate.auto_connected) {
    return CreateAliasAndVerify(nyxid, candidate, caller, chrono_catalog_id);
  }
  if (!CallerMayWrite(candidate, caller)) {
    return Result(ConvergenceOutcome::kBlockedWriteAuthority, 0);
  }
  return PatchAndVerify(nyxid, candidate);
}

}  // namespace aevatar::orchestrator
