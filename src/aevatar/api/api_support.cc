#include "aevatar/api/api_support.h"

#include <chrono>

#include "aevatar/admission/route_admission.h"
#include "aevatar/api/aevatar_metrics.h"
#include "base/api_error.h"
#include "base/log.h"
#include "http/problem.h"

namespace aevatar::orchestrator {

RequestNote::RequestNote() : diagnostic_id(http::NewDiagnosticId()) {}

http::Response NoStore(http::Response response) {
  response.headers.Set("Cache-Control", "no-store");
  return response;
}

http::Response Json(int status, const nlohmann::json& body) {
  return http::JsonResponse(status,
                            body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

http::Response Problem(const absl::Status& status, RequestNote& note) {
  note.code = base::ApiCode(status);
  http::Response response = http::ProblemResponse(status, note.diagnostic_id);
  if (std::string remediation = RemediationOf(status); !remediation.empty()) {
    nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
    if (body.is_object()) {
      body["remediation"] = remediation;
      response.body = body.dump();
    }
  }
  return response;
}

absl::StatusOr<Caller> Authenticated(const HttpApiDeps& deps, const http::Request& request,
                                     RequestNote& note) {
  auto caller = deps.auth->Authenticate(request);
  if (!caller.ok()) return caller;
  note.credential_kind = std::string(CredentialKindName(caller->kind));
  if (absl::Status st = CheckCallerScope(*caller, note.scope); !st.ok()) return st;
  return caller;
}

http::Handler Logged(std::shared_ptr<const HttpApiDeps> deps, std::string route,
                     RouteHandler handler, CallerScope scope) {
  using Clock = std::chrono::steady_clock;
  return [deps, route = std::move(route), handler, scope](http::Request& request) {
    const Clock::time_point start = Clock::now();
    RequestNote note;
    note.scope = scope;
    http::Response response = handler(*deps, request, note);
    const Clock::duration took = Clock::now() - start;
    if (deps->metrics != nullptr) {
      deps->metrics->CountRequest(route, response.status, note.code,
                                  std::chrono::duration<double>(took).count());
    }
    nlohmann::json fields = {
        {"route", route},
        {"status", response.status},
        {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(took).count()},
    };
    if (!note.credential_kind.empty()) fields["credential_kind"] = note.credential_kind;
    if (!note.code.empty()) {
      fields["code"] = note.code;
      fields["diagnostic_id"] = note.diagnostic_id;
    }
    base::Log(base::LogLevel::kInfo, "http.request", note.diagnostic_id, fields);
    return response;
  };
}

}  // namespace aevatar::orchestrator
