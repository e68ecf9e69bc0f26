#ifndef AEVATAR_AEVATAR_ADMISSION_AGENT_KEY_SCOPE_H_
#define AEVATAR_AEVATAR_ADMISSION_AGENT_KEY_SCOPE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "aevatar/admission/ingress_auth.h"

// What an Agent Key restricted to some services (a non-empty
// allowed_services) may do at aevatar.
//
// Theory of operation. Such a key is an execution credential, not a
// source-readable inventory credential (spec: sandbox-execution.md): the
// owner made it for scheduled, channel, webhook or other work of one
// service. At aevatar it may only invoke, and only where its restriction is
// enforced on the call that reaches the service:
//  - code_execute (and a workflow's code_execute and private_ssh steps): the
//    key itself goes to NyxID's proxy or SSH route, which refuses it outside
//    its services (403 AGENT_KEY_SERVICE_NOT_ALLOWED / SSH_CREDENTIAL_NOT_ALLOWED);
//  - managed codex_exec: aevatar's own managed key reaches NyxID, so aevatar
//    checks the caller's key against the user's chrono-sandbox route itself
//    (CheckAgentKeyAllowsRoute, in ManagedCodex::Execute);
//  - starting a run of a saved workflow, whose steps are the calls above.
// Everything else (reading runs, events, audit, approvals, workflows,
// readiness and credential status; saving, binding, stopping, deciding)
// answers 403 AGENT_KEY_RESTRICTED. The router says which is which, one flag
// per route (CallerScope); unrestricted keys and tokens are not affected.
namespace aevatar::orchestrator {

// Who may call an authenticated route of aevatar's router.
enum class CallerScope {
  // Every authenticated caller except a restricted Agent Key: the user's
  // things are read or managed here. The default of every route.
  kAccount,
  // Also a restricted Agent Key: the route invokes, and the key's
  // restriction is enforced on the upstream call (see above).
  kExecution,
};

// OK when `caller` may call a route of `scope`; 403 AGENT_KEY_RESTRICTED for
// a restricted Agent Key on a kAccount route.
absl::Status CheckCallerScope(const Caller& caller, CallerScope scope);

// 403 AGENT_KEY_RESTRICTED: `detail` says what the key may not do here.
absl::Status AgentKeyRestricted(std::string detail);

// NyxID's AgentKeyAllowsRoute (src/nyxid/tokens/agent_keys.cc) on aevatar's
// side: true when `allowed_services` is empty or names the route by its id or
// by its slug.
bool AllowedServicesNameRoute(const std::vector<std::string>& allowed_services,
                              std::string_view route_id, std::string_view slug);

// OK when AllowedServicesNameRoute; else 403 AGENT_KEY_SERVICE_NOT_ALLOWED,
// NyxID's code for the same refusal.
absl::Status CheckAgentKeyAllowsRoute(const std::vector<std::string>& allowed_services,
                                      std::string_view route_id, std::string_view slug);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ADMISSION_AGENT_KEY_SCOPE_H_
