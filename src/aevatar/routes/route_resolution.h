#ifndef AEVATAR_AEVATAR_ROUTES_ROUTE_RESOLUTION_H_
#define AEVATAR_AEVATAR_ROUTES_ROUTE_RESOLUTION_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "aevatar/routes/route_inventory.h"

// Fail-closed selection of the one chrono-sandbox UserService that
// code_execute sends as _nyxid_via (spec: sandbox-execution.md, "code_execute"
// and "Accepted execution credentials").
//
// The inventory is narrowed in four steps, each counted:
//   canonical   catalog_service_id == the chrono-sandbox catalog id (a custom
//               service with the same slug and no catalog id never counts)
//   accessible  a personal route the caller owns, or an org route with
//               credential_source.allowed whose org the caller belongs to
//   active      active == true
//   eligible    the credential-policy conjunction holds (GapsOf is empty)
// Exactly one eligible route is selected; anything else is a typed blocker
// named after the first step that left nothing (or "ambiguous" when more than
// one is eligible). There is no slug fallback and no first-candidate choice.
// These rules are private to the code_execute (PlatformBuiltIn) route: they
// must not filter CallerConnected inventory or managed Codex eligibility.
namespace aevatar::orchestrator {

inline constexpr char kProxyScope[] = "proxy:*";
inline constexpr char kSandboxExecuteScope[] = "sandbox:execute";

enum class ResolutionOutcome {
  kReady,
  kMissing,
  kInactive,
  kPolicyMismatch,
  kAmbiguous,
  kAccessDenied
};

// "CODE_EXECUTION_ROUTE_MISSING", "…_INACTIVE", "…_POLICY_MISMATCH",
// "…_AMBIGUOUS", "…_ACCESS_DENIED"; kReady -> "READY". The lowercase
// diagnostic category is this string lowercased.
std::string_view ResolutionCode(ResolutionOutcome outcome);

// How many routes survived each narrowing step (see the block above).
struct CandidateCounts {
  int canonical = 0, accessible = 0, active = 0, eligible = 0;
};

// The unsatisfied parts of the credential-policy conjunction. All false means
// the route delivers both credentials chrono-sandbox accepts.
struct PolicyGaps {
  bool forward_access_token = false, inject_delegation_token = false, proxy_scope = false,
       sandbox_execute_scope = false;

  // True when any part is unsatisfied.
  bool any() const;
  // Names each unsatisfied part, comma-separated in a fixed order, e.g.
  // "forward_access_token=false, scope lacks sandbox:execute"; "" when none.
  std::string Describe() const;
};

// The credential-policy conjunction of `route`: forward_access_token,
// inject_delegation_token, and scopes containing both proxy:* and
// sandbox:execute (membership, not order; other scopes are fine).
PolicyGaps GapsOf(const RouteFacts& route);

// Whether `caller` may use `route` through the proxy: a personal route it
// owns, or an org route with credential_source.allowed in an org the caller
// belongs to (any role).
bool IsAccessibleTo(const RouteFacts& route, const CallerFacts& caller);

// The canonical, accessible and active routes of `inventory`, in inventory
// order: the candidates the policy step (and convergence) looks at.
std::vector<RouteFacts> ActiveCandidates(const std::vector<RouteFacts>& inventory,
                                         const CallerFacts& caller,
                                         const std::string& chrono_catalog_id);

struct RouteResolution {
  ResolutionOutcome outcome = ResolutionOutcome::kMissing;
  std::optional<RouteFacts> route;  // set only when kReady
  CandidateCounts counts;
  // For kPolicyMismatch: the unsatisfied parts of the single active candidate,
  // or their union when several are active. Empty otherwise.
  PolicyGaps gaps;
  std::string remediation;  // one human sentence; "" when kReady
};

// Selects the code_execute route from the caller-visible inventory. Pure: it
// reads and writes nothing, so readiness and execution may call it freely.
// An empty `chrono_catalog_id` matches nothing (kMissing).
RouteResolution ResolveCodeExecutionRoute(const std::vector<RouteFacts>& inventory,
                                          const CallerFacts& caller,
                                          const std::string& chrono_catalog_id);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ROUTES_ROUTE_RESOLUTION_H_
