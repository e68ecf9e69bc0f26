// GET /executions[?status=&limit=&cursor=]: the caller's operations, newest
// first, a page at a time. Owner-scoped like every other route: the owner is
// the delegation token's subject, never a parameter, so no caller can list
// another's operations. Each item is the operation's status document (no
// source, no output); `next_cursor` (absent on the last page) asks for the
// next page.
#include "base/api_error.h"
#include "base/page_cursor.h"
#include "chrono/api_support.h"

namespace aevatar::chrono {
namespace {

constexpr int kDefaultExecutionsPage = 50;
constexpr int kMaxExecutionsPage = 100;

absl::StatusOr<OperationListQuery> ListQueryOf(const http::Request& request, std::string owner,
                                               int64_t now_ms) {
  OperationListQuery query;
  query.owner = std::move(owner);
  query.now_ms = now_ms;
  if (auto status = request.QueryParam("status"); status && !status->empty()) {
    query.status = ParseOperationStatus(*status);
    if (!query.status) {
      return base::ApiError(absl::StatusCode::kInvalidArgument, "INVALID_STATUS",
                            "status is one of queued, running, succeeded, failed, cancelled, "
                            "outcome_uncertain");
    }
  }
  auto page =
      base::PageLimitOf(request.QueryParam("limit"), kDefaultExecutionsPage, kMaxExecutionsPage);
  if (!page.ok()) return page.status();
  query.limit = *page + 1;  // one more tells whether another page follows
  if (auto cursor = request.QueryParam("cursor"); cursor && !cursor->empty()) {
    auto position = base::DecodePageCursor(*cursor);
    if (!position.ok()) return position.status();
    query.after = *position;
  }
  return query;
}

}  // namespace

http::Response HandleListExecutions(const ApiContext& ctx, http::Request& request,
                                    RequestNote& note) {
  auto caller = ctx.deps.auth->Authenticate(request, {kExecuteScope});
  if (!caller.ok()) return Problem(caller.status(), note);
  auto query = ListQueryOf(request, caller->owner, ctx.deps.now());
  if (!query.ok()) return Problem(query.status(), note);
  auto ops = ctx.deps.store->ListOwned(*query);
  if (!ops.ok()) return Problem(ops.status(), note);
  const bool more = static_cast<int>(ops->size()) == query->limit;
  if (more) ops->pop_back();
  nlohmann::json items = nlohmann::json::array();
  for (const Operation& op : *ops) items.push_back(StatusDocument(op));
  nlohmann::json page = {{"executions", items}};
  if (more && !ops->empty()) {
    page["next_cursor"] = base::EncodePageCursor({ops->back().created_at_ms, ops->back().id});
  }
  return Json(200, page);
}

}  // namespace aevatar::chrono
