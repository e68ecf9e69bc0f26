#ifndef AEVATAR_AEVATAR_API_API_SUPPORT_H_
#define AEVATAR_AEVATAR_API_API_SUPPORT_H_

// Shared plumbing of aevatar's HTTP handlers (private to src/aevatar).

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/admission/ingress_auth.h"
#include "aevatar/api/http_api.h"
#include "http/message.h"
#include "http/router.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// What a request's log line says besides route and status.
struct RequestNote {
  std::string diagnostic_id;
  std::string code;
  std::string credential_kind;
  RequestNote();
};

using RouteHandler = http::Response (*)(const HttpApiDeps&, http::Request&, RequestNote&);
using AddRoute = std::function<void(const char* method, const char* route, RouteHandler)>;

http::Response Json(int status, const nlohmann::json& body);
// `response` with Cache-Control: no-store (an answer holding a prompt, a
// token or a credential status, which no cache may keep).
http::Response NoStore(http::Response response);
// problem+json with the note's diagnostic id and, when attached, a remediation.
http::Response Problem(const absl::Status& status, RequestNote& note);
absl::StatusOr<Caller> Authenticated(const HttpApiDeps& deps, const http::Request& request,
                                     RequestNote& note);
// Wraps a handler with one log line per request (route pattern, status,
// credential kind, code and diagnostic id; never payloads or ids of routes).
http::Handler Logged(std::shared_ptr<const HttpApiDeps> deps, std::string route,
                     RouteHandler handler);

// The workflow routes (workflow_api.cc).
void AddWorkflowRoutes(const AddRoute& add);
// The managed codex_exec routes (codex_api.cc).
void AddCodexRoutes(const AddRoute& add);
void AddApprovalRoutes(const AddRoute& add);
void AddUiRoutes(const AddRoute& add);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_API_SUPPORT_H_
