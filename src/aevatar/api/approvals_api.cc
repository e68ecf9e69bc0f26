// The owner's approvals: list, read, approve, deny. Each decision is for the
// exact call the approval shows (its call_digest) and is taken once.
#include "aevatar/api/api_support.h"
#include "aevatar/approvals/approval_store.h"
#include "base/api_error.h"
#include "base/clock.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

constexpr int kListLimit = 100;

http::Response HandleListApprovals(const HttpApiDeps& deps, http::Request& request,
                                   RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto approvals = deps.approvals->List(caller->user_id, kListLimit);
  if (!approvals.ok()) return Problem(approvals.status(), note);
  const int64_t now = base::NowUnixMs();
  json list = json::array();
  for (const Approval& approval : *approvals) list.push_back(ApprovalJson(approval, now));
  return NoStore(Json(200, {{"approvals", list}}));
}

http::Response HandleGetApproval(const HttpApiDeps& deps, http::Request& request,
                                 RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto approval = deps.approvals->Get(caller->user_id, request.path_params["id"]);
  if (!approval.ok()) return Problem(approval.status(), note);
  if (!approval->has_value()) {
    return Problem(base::ApiError(absl::StatusCode::kNotFound, "APPROVAL_NOT_FOUND",
                                  "no such approval for this user", 404),
                   note);
  }
  return NoStore(Json(200, ApprovalJson(**approval, base::NowUnixMs())));
}

http::Response Decide(const HttpApiDeps& deps, http::Request& request, RequestNote& note,
                      bool approve) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  // The agent that asked must not grant itself: approving takes the person's
  // own access token (an Agent Key or a delegation token may only deny).
  if (approve && caller->kind != CredentialKind::kHumanBearer) {
    return Problem(
        base::ApiError(absl::StatusCode::kPermissionDenied, "APPROVAL_NEEDS_HUMAN",
                       "only the owner's own login can approve, not an agent's key", 403),
        note);
  }
  const int64_t now = base::NowUnixMs();
  auto decided = deps.approvals->Decide(caller->user_id, request.path_params["id"], approve, now);
  if (!decided.ok()) return Problem(decided.status(), note);
  return NoStore(Json(200, ApprovalJson(*decided, now)));
}

http::Response HandleApprove(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  return Decide(deps, request, note, /*approve=*/true);
}

http::Response HandleDeny(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  return Decide(deps, request, note, /*approve=*/false);
}

}  // namespace

void AddApprovalRoutes(const AddRoute& add) {
  add("GET", "/api/approvals", HandleListApprovals);
  add("GET", "/api/approvals/{id}", HandleGetApproval);
  add("POST", "/api/approvals/{id}/approve", HandleApprove);
  add("POST", "/api/approvals/{id}/deny", HandleDeny);
}

}  // namespace aevatar::orchestrator
