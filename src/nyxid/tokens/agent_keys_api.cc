// Agent Key lifecycle: create (shown once), list, revoke. Human tokens only.
#include "base/api_error.h"
#include "base/clock.h"
#include "nyxid/api/admin_audit.h"
#include "nyxid/api/api_support.h"
#include "nyxid/routes/route_access.h"
#include "nyxid/tokens/agent_keys.h"

namespace aevatar::nyxid {
namespace {

nlohmann::json KeyJson(const AgentKeyRecord& key) {
  return {{"id", key.id},
          {"label", key.label},
          {"key_prefix", key.key_prefix},
          {"allowed_services", key.allowed_services},
          {"created_at_ms", key.created_at_ms},
          {"revoked", key.revoked_at_ms.has_value()},
          {"revoked_at_ms", key.revoked_at_ms ? nlohmann::json(*key.revoked_at_ms) : nullptr}};
}

absl::Status BadRequest(std::string code, std::string detail) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, std::move(code), std::move(detail),
                        400);
}

}  // namespace

http::Response HandleCreateAgentKey(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireHumanToken(*caller); !st.ok()) return Problem(st, note);
  auto body = JsonObjectBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  const auto label = body->find("label");
  if (label == body->end() || !label->is_string() || label->get<std::string>().empty() ||
      label->get<std::string>().size() > 200) {
    return Problem(BadRequest("AGENT_KEY_LABEL_INVALID", "label (1 to 200 characters) is required"),
                   note);
  }
  std::vector<std::string> allowed;
  if (const auto list = body->find("allowed_services"); list != body->end() && !list->is_null()) {
    if (!list->is_array()) {
      return Problem(BadRequest("AGENT_KEY_ALLOWED_SERVICES_INVALID",
                                "allowed_services is a list of user service ids or slugs"),
                     note);
    }
    for (const nlohmann::json& entry : *list) {
      if (!entry.is_string() || entry.get<std::string>().empty()) {
        return Problem(BadRequest("AGENT_KEY_ALLOWED_SERVICES_INVALID",
                                  "allowed_services is a list of user service ids or slugs"),
                       note);
      }
      allowed.push_back(entry.get<std::string>());
    }
  }
  NewAgentKey key =
      GenerateAgentKey(caller->user.id, label->get<std::string>(), allowed, base::NowUnixMs());
  if (absl::Status st = deps.store->InsertAgentKey(key.record); !st.ok()) return Problem(st, note);
  RecordAdminAction(*deps.store, caller->user.id, "agent_key.created", "agent_key", key.record.id,
                    {{"label", key.record.label}, {"allowed_services", allowed}});
  nlohmann::json out = KeyJson(key.record);
  out["key"] = key.secret;  // the only time the key is ever shown
  return NoStore(Json(201, out));
}

http::Response HandleListAgentKeys(const HttpApiDeps& deps, http::Request& request,
                                   RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireHumanToken(*caller); !st.ok()) return Problem(st, note);
  auto keys = deps.store->ListAgentKeys(caller->user.id);
  if (!keys.ok()) return Problem(keys.status(), note);
  nlohmann::json list = nlohmann::json::array();
  for (const AgentKeyRecord& key : *keys) list.push_back(KeyJson(key));
  return Json(200, {{"agent_keys", list}});
}

http::Response HandleRevokeAgentKey(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireHumanToken(*caller); !st.ok()) return Problem(st, note);
  absl::Status revoked =
      deps.store->RevokeAgentKey(caller->user.id, request.path_params["id"], base::NowUnixMs());
  if (absl::IsNotFound(revoked)) {
    return Problem(base::ApiError(absl::StatusCode::kNotFound, "AGENT_KEY_NOT_FOUND",
                                  "no such agent key", 404),
                   note);
  }
  if (!revoked.ok()) return Problem(revoked, note);
  RecordAdminAction(*deps.store, caller->user.id, "agent_key.revoked", "agent_key",
                    request.path_params["id"]);
  http::Response response;
  response.status = 204;
  return response;
}

}  // namespace aevatar::nyxid
