#ifndef AEVATAR_AEVATAR_API_API_SUPPORT_H_
#define AEVATAR_AEVATAR_API_API_SUPPORT_H_

// Shared plumbing of aevatar's HTTP handlers (private to src/aevatar).

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/admission/agent_key_scope.h"
#include "aevatar/admission/ingress_auth.h"
#include "aevatar/api/http_api.h"
#include "http/message.h"
#include "http/router.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// What a request's log line says besides route and status, and who the
// route admits (from the router table).
struct RequestNote {
  std::string diagnostic_id;
  std::string code;
  std::string credential_kind;
  CallerScope scope = CallerScope::kAccount;
  RequestNote();
};

using RouteHandler = http::Response (*)(const HttpApiDeps&, http::Request&, RequestNote&);

// Adds one route to the router table: `scope` says whether a restricted
// Agent Key may call it (agent_key_scope.h); every route is kAccount unless
// its row says otherwise.
class AddRoute {
 public:
  using Fn = std::function<void(const char* method, const char* route, RouteHandler, CallerScope)>;
  explicit AddRoute(Fn fn) : fn_(std::move(fn)) {}
  void operator()(const char* method, const char* route, RouteHandler handler,
                  CallerScope scope = CallerScope::kAccount) const {
    fn_(method, route, handler, scope);
  }

 private:
  Fn fn_;
};

http::Response Json(int status, const nlohmann::json& body);
// `response` with Cache-Control: no-store (an answer holding a prompt, a
// token or a credential status, which no cache may keep).
http::Response NoStore(http::Response response);
// problem+json with the note's diagnostic id and, when attached, a remediation.
http::Response Problem(const absl::Status& status, RequestNote& note);
// The caller of `request`, admitted to the route's `note.scope`: the
// authentication errors of IngressAuth, or 403 AGENT_KEY_RESTRICTED
// (CheckCallerScope). Every authenticated handler starts with it.
absl::StatusOr<Caller> Authenticated(const HttpApiDeps& deps, const http::Request& request,
                                     RequestNote& note);
// Wraps a handler with one log line per request (route pattern, status,
// credential kind, code and diagnostic id; never payloads or ids of routes);
// its requests' notes carry `scope`.
http::Handler Logged(std::shared_ptr<const HttpApiDeps> deps, std::string route,
                     RouteHandler handler, CallerScope scope);

// The workflow routes (workflow_api.cc).
void AddWorkflowRoutes(const AddRoute& add);
// The managed codex_exec routes (codex_api.cc).
void AddCodexRoutes(const AddRoute& add);
void AddApprovalRoutes(const AddRoute& add);
// The skill registry routes (skills_api.cc).
void AddSkillRoutes(const AddRoute& add);
void AddUiRoutes(const AddRoute& add);
// POST|DELETE /mcp (mcp_api.cc).
void AddMcpRoutes(const AddRoute& add);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_API_SUPPORT_H_
