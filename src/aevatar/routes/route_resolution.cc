#include "aevatar/routes/route_resolution.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace aevatar::orchestrator {
namespace {

bool HasScope(const RouteFacts& route, const std::string& scope) {
  return std::find(route.scopes.begin(), route.scopes.end(), scope) != route.scopes.end();
}

bool IsCanonical(const RouteFacts& route, const std::string& chrono_catalog_id) {
  // Only the catalog identity counts; the slug is caller-chosen and could be
  // borrowed by any custom service.
  return !chrono_catalog_id.empty() && route.catalog_service_id.has_value() &&
         *route.catalog_service_id == chrono_catalog_id;
}

PolicyGaps Union(const PolicyGaps& a, const PolicyGaps& b) {
  PolicyGaps out;
  out.forward_access_token = a.forward_access_token || b.forward_access_token;
  out.inject_delegation_token = a.inject_delegation_token || b.inject_delegation_token;
  out.proxy_scope = a.proxy_scope || b.proxy_scope;
  out.sandbox_execute_scope = a.sandbox_execute_scope || b.sandbox_execute_scope;
  return out;
}

std::string Remediation(ResolutionOutcome outcome, const PolicyGaps& gaps) {
  switch (outcome) {
    case ResolutionOutcome::kReady:
      return "";
    case ResolutionOutcome::kMissing:
      return "Connect the catalog chrono-sandbox service in NyxID; no catalog-backed "
             "chrono-sandbox route is visible to you.";
    case ResolutionOutcome::kAccessDenied:
      return "Ask the route owner to let you use the chrono-sandbox route (an organisation "
             "route needs credential_source.allowed), or connect your own.";
    case ResolutionOutcome::kInactive:
      return "Activate your chrono-sandbox route in NyxID.";
    case ResolutionOutcome::kPolicyMismatch:
      return absl::StrCat(
          "Update the chrono-sandbox route to forward_access_token=true, "
          "inject_delegation_token=true and a scope containing proxy:* and sandbox:execute (",
          gaps.Describe(), ").");
    case ResolutionOutcome::kAmbiguous:
      return "Deactivate all but one compliant chrono-sandbox route in NyxID; more than one "
             "qualifies and none is chosen implicitly.";
  }
  return "";
}

}  // namespace

std::string_view ResolutionCode(ResolutionOutcome outcome) {
  switch (outcome) {
    case ResolutionOutcome::kReady:
      return "READY";
    case ResolutionOutcome::kMissing:
      return "CODE_EXECUTION_ROUTE_MISSING";
    case ResolutionOutcome::kInactive:
      return "CODE_EXECUTION_ROUTE_INACTIVE";
    case ResolutionOutcome::kPolicyMismatch:
      return "CODE_EXECUTION_ROUTE_POLICY_MISMATCH";
    case ResolutionOutcome::kAmbiguous:
      return "CODE_EXECUTION_ROUTE_AMBIGUOUS";
    case ResolutionOutcome::kAccessDenied:
      return "CODE_EXECUTION_ROUTE_ACCESS_DENIED";
  }
  return "CODE_EXECUTION_ROUTE_MISSING";
}

bool PolicyGaps::any() const {
  return forward_access_token || inject_delegation_token || proxy_scope || sandbox_execute_scope;
}

std::string PolicyGaps::Describe() const {
  std::vector<std::string> parts;
  if (forward_access_token) parts.push_back("forward_access_token=false");
  if (inject_delegation_token) parts.push_back("inject_delegation_token=false");
  if (proxy_scope) parts.push_back(absl::StrCat("scope lacks ", kProxyScope));
  if (sandbox_execute_scope) parts.push_back(absl::StrCat("scope lacks ", kSandboxExecuteScope));
  return absl::StrJoin(parts, ", ");
}

PolicyGaps GapsOf(const RouteFacts& route) {
  PolicyGaps gaps;
  gaps.forward_access_token = !route.forward_access_token;
  gaps.inject_delegation_token = !route.inject_delegation_token;
  gaps.proxy_scope = !HasScope(route, kProxyScope);
  gaps.sandbox_execute_scope = !HasScope(route, kSandboxExecuteScope);
  return gaps;
}

bool IsAccessibleTo(const RouteFacts& route, const CallerFacts& caller) {
  if (route.owner_type == "user") return route.owner_id == caller.user_id;
  if (route.owner_type == "org") {
    return route.credential_source_allowed && caller.org_roles.count(route.owner_id) > 0;
  }
  return false;  // an unknown owner kind is never accessible
}

std::vector<RouteFacts> ActiveCandidates(const std::vector<RouteFacts>& inventory,
                                         const CallerFacts& caller,
                                         const std::string& chrono_catalog_id) {
  std::vector<RouteFacts> out;
  for (const RouteFacts& route : inventory) {
    if (IsCanonical(route, chrono_catalog_id) && IsAccessibleTo(route, caller) && route.active) {
      out.push_back(route);
    }
  }
  return out;
}

RouteResolution ResolveCodeExecutionRoute(const std::vector<RouteFacts>& inventory,
                                          const CallerFacts& caller,
                                          const std::string& chrono_catalog_id) {
  RouteResolution result;
  PolicyGaps active_gaps;
  const RouteFacts* eligible = nullptr;
  for (const RouteFacts& route : inventory) {
    if (!IsCanonical(route, chrono_catalog_id)) continue;
    ++result.counts.canonical;
    if (!IsAccessibleTo(route, caller)) continue;
    ++result.counts.accessible;
    if (!route.active) continue;
    ++result.counts.active;
    const PolicyGaps gaps = GapsOf(route);
    active_gaps = Union(active_gaps, gaps);
    if (gaps.any()) continue;
    ++result.counts.eligible;
    eligible = &route;
  }

  const CandidateCounts& counts = result.counts;
  if (counts.eligible == 1) {
    result.outcome = ResolutionOutcome::kReady;
    result.route = *eligible;
    return result;
  }
  if (counts.eligible > 1) {
    result.outcome = ResolutionOutcome::kAmbiguous;
  } else if (counts.canonical == 0) {
    result.outcome = ResolutionOutcome::kMissing;
  } else if (counts.accessible == 0) {
    result.outcome = ResolutionOutcome::kAccessDenied;
  } else if (counts.active == 0) {
    result.outcome = ResolutionOutcome::kInactive;
  } else {
    result.outcome = ResolutionOutcome::kPolicyMismatch;
    result.gaps = active_gaps;
  }
  result.remediation = Remediation(result.outcome, result.gaps);
  return result;
}

}  // namespace aevatar::orchestrator
