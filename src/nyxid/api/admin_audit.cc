#include "nyxid/api/admin_audit.h"

#include "base/api_error.h"
#include "base/clock.h"
#include "base/log.h"
#include "nyxid/api/api_support.h"
#include "nyxid/routes/route_access.h"

namespace aevatar::nyxid {

void RecordAdminAction(NyxidStore& store, const std::string& actor, const std::string& action,
                       const std::string& target_type, const std::string& target_id,
                       const nlohmann::json& detail) {
  AdminAuditEntry entry;
  entry.at_ms = base::NowUnixMs();
  entry.actor = actor;
  entry.action = action;
  entry.target_type = target_type;
  entry.target_id = target_id;
  entry.detail = detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (absl::Status st = store.AppendAdminAudit(entry); !st.ok()) {
    base::Log(base::LogLevel::kError, "nyxid.admin_audit_failed", "",
              {{"action", action}, {"error", std::string(st.message())}});
  }
}

// GET /api/v1/admin/audit?after=SEQ&limit=N (platform admins): entries
// oldest first; `next_after` continues the listing.
http::Response HandleListAdminAudit(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequirePlatformAdmin(*caller, "read the admin audit log"); !st.ok()) {
    return Problem(st, note);
  }
  int64_t after = 0;
  int64_t limit = 100;
  const auto read = [](const std::optional<std::string>& text, int64_t& out, int64_t max) {
    if (!text) return true;
    if (text->empty() || text->size() > 18 ||
        text->find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    out = std::stoll(*text);
    return out <= max;
  };
  if (!read(request.QueryParam("after"), after, INT64_MAX) ||
      !read(request.QueryParam("limit"), limit, 1000) || limit < 1) {
    return Problem(base::ApiError(absl::StatusCode::kInvalidArgument, "QUERY_INVALID",
                                  "after is a sequence number; limit is 1..1000", 400),
                   note);
  }
  auto entries = deps.store->ListAdminAudit(after, static_cast<int>(limit));
  if (!entries.ok()) return Problem(entries.status(), note);
  nlohmann::json out = nlohmann::json::array();
  for (const AdminAuditEntry& entry : *entries) {
    nlohmann::json detail = nlohmann::json::parse(entry.detail, nullptr, false);
    out.push_back({{"seq", entry.seq},
                   {"at_ms", entry.at_ms},
                   {"actor", entry.actor},
                   {"action", entry.action},
                   {"target_type", entry.target_type},
                   {"target_id", entry.target_id},
                   {"detail", detail.is_object() ? detail : nlohmann::json::object()}});
    after = entry.seq;
  }
  return Json(200, {{"entries", out}, {"next_after", after}});
}

}  // namespace aevatar::nyxid
