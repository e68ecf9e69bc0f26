#ifndef AEVATAR_AEVATAR_API_HTTP_API_H_
#define AEVATAR_AEVATAR_API_HTTP_API_H_

#include <memory>
#include <string>
#include <vector>

#include "aevatar/admission/ingress_auth.h"
#include "aevatar/admission/tool_catalog.h"
#include "aevatar/clients/nyxid_client.h"
#include "http/openapi.h"
#include "http/router.h"

namespace aevatar::orchestrator {

class WorkflowRuntime;
class WorkflowStore;
class AuditLog;
class ManagedCodex;
class ApprovalStore;
class McpSessions;
class AdmissionCache;
class SkillStore;
class AevatarMetrics;
class TriggerStore;
class ManagedCredentialVault;
}  // namespace aevatar::orchestrator

namespace aevatar::base {
class LoginThrottle;
struct LoginThrottleOptions;
}  // namespace aevatar::base

namespace aevatar::orchestrator {

struct HttpApiDeps {
  const NyxidClient* nyxid;
  IngressAuth* auth;
  std::string chrono_catalog_id;
  // Workflows; the routes are left out when these are null.
  WorkflowStore* workflows = nullptr;
  WorkflowRuntime* runtime = nullptr;
  AuditLog* audit = nullptr;
  // Managed codex_exec; null when the operator turned it off (its routes
  // then answer managed_target_disabled).
  ManagedCodex* codex = nullptr;
  // Workflow triggers; their routes are left out when null (trigger_runs.h).
  TriggerStore* triggers = nullptr;
  // The Vault-backed Agent Keys unattended runs execute with; null: none.
  ManagedCredentialVault* agent_key_vault = nullptr;
  // Durable human approvals; their routes are left out when null.
  ApprovalStore* approvals = nullptr;
  // The skill registry; its routes are left out when null (or without
  // workflows, which a mount saves).
  SkillStore* skills = nullptr;
  // Per client: /ui logins all reach NyxID from aevatar's own address, so
  // aevatar slows a guessing client itself, before NyxID's address count
  // would lock every /ui user. Null: none.
  base::LoginThrottle* ui_login_throttle = nullptr;
  // The runtime environments code_execute advertises (tools, readiness).
  std::vector<RuntimeOffer> runtimes = {};
  // Interactive code_execute admissions reused while NyxID confirms their
  // facts (admission_cache.h); null: every call admits afresh.
  std::shared_ptr<AdmissionCache> admissions = nullptr;
  // POST /mcp's sessions; BuildHttpApi makes one when null.
  std::shared_ptr<McpSessions> mcp_sessions = nullptr;
  // The /metrics series; null: nothing is counted and GET /metrics is 503
  // METRICS_UNAVAILABLE (in-process tests).
  AevatarMetrics* metrics = nullptr;
  // The bearer token that reads /metrics; "" = loopback peers only.
  std::string metrics_token = "";
};

// Aevatar's HTTP API:
//   GET  /api/tools                               tool schemas and selection rules
//   POST /api/tools/code_execute                  interactive execution
//   GET  /api/capabilities/code_execute/readiness read-only route readiness
//   POST /api/tools/codex_exec                    interactive managed codex_exec
//   POST|GET /api/managed-codex/credential        the managed credential lifecycle
//   GET  /api/capabilities/codex_exec/readiness   read-only managed readiness
//   workflows: POST /api/workflows, POST /api/workflows/{id}/bind,
//     POST /api/workflow-runs, GET /api/workflow-runs (the caller's, newest first),
//     GET /api/workflow-runs/{id}[/events],
//     POST /api/workflow-runs/{id}/stop, GET /api/audit?run_id= (workflow_api.cc)
//   triggers: POST /api/hooks/{id} (signed webhook deliveries),
//     GET /api/workflows/{id}/triggers, POST /api/triggers/agent-key (triggers_api.cc)
//   GET  /api/approvals[/{id}], POST /api/approvals/{id}/approve|deny
//                                                 the caller's approvals (approvals_api.cc)
//   skills: POST|GET /api/skills, GET /api/skills/{name}[/versions/{version}],
//     POST /api/skills/use, GET /api/skills/mounts/{id} (skills_api.cc)
//   GET  /ui, /ui/app.js, /ui/style.css, POST /ui/login   the approvals page (ui_api.cc)
//   POST|DELETE /mcp                              the MCP server, Streamable HTTP (mcp_api.cc)
//   GET  /api/info                                public: the NyxID URL to log in at
//   GET  /healthz, /readyz, /openapi.json, /metrics (Prometheus text; loopback or the
//        metrics token)
// Errors are problem+json with a typed code, a diagnostic id and, for route
// problems, a remediation. One log line per request, never with payloads,
// credentials or route ids.
std::unique_ptr<http::Router> BuildHttpApi(const HttpApiDeps& deps);

// The files of aevatar's OpenAPI document (src/aevatar/api/openapi/, compiled
// in): what GET /openapi.json serves and the coverage test checks.
std::vector<http::OpenApiFragment> OpenApiFragments();

// The /ui login's per-client throttle (HttpApiDeps::ui_login_throttle):
// NyxID's rules, but 5 free failures per client address instead of 20, so
// one guessing client is slowed here long before NyxID's count for
// aevatar's address could lock /ui for everyone.
base::LoginThrottleOptions UiLoginThrottleOptions();

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_HTTP_API_H_
