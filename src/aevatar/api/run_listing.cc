#include "aevatar/api/run_listing.h"

#include <array>
#include <charconv>

#include "base/api_error.h"
#include "base/page_cursor.h"

namespace aevatar::orchestrator {
namespace {

constexpr size_t kMaxWorkflowIdFilter = 256;
constexpr std::array<std::string_view, 5> kRunPhases = {"running", "finalizing_audit", "succeeded",
                                                        "failed", "stopped"};

}  // namespace

std::string EncodeRunCursor(const RunListPosition& position) {
  return base::EncodePageCursor({position.created_at_ms, position.run_id});
}

absl::StatusOr<RunListQuery> RunListQueryOf(const std::string& owner,
                                            const std::optional<std::string>& status,
                                            const std::optional<std::string>& workflow_id,
                                            const std::optional<std::string>& limit,
                                            const std::optional<std::string>& cursor) {
  RunListQuery query;
  query.owner = owner;
  if (status && !status->empty()) {
    bool known = false;
    for (std::string_view phase : kRunPhases) known = known || phase == *status;
    if (!known) {
      return base::ApiError(absl::StatusCode::kInvalidArgument, "INVALID_STATUS",
                            "status is one of running, finalizing_audit, succeeded, failed, "
                            "stopped");
    }
    query.phase = *status;
  }
  if (workflow_id && !workflow_id->empty()) {
    if (workflow_id->size() > kMaxWorkflowIdFilter) {
      return base::ApiError(absl::StatusCode::kInvalidArgument, "INVALID_WORKFLOW_ID",
                            "workflow_id is too long");
    }
    query.workflow_id = *workflow_id;
  }
  auto page = base::PageLimitOf(limit, kDefaultRunPage, kMaxRunPage);
  if (!page.ok()) return page.status();
  query.limit = *page + 1;
  if (cursor && !cursor->empty()) {
    auto position = base::DecodePageCursor(*cursor);
    if (!position.ok()) return position.status();
    query.after = RunListPosition{position->created_at_ms, position->id};
  }
  return query;
}

absl::StatusOr<int64_t> LastEventIdOf(const std::optional<std::string>& header) {
  if (!header || header->empty()) return 0;
  int64_t seq = 0;
  const char* end = header->data() + header->size();
  const auto [stop, error] = std::from_chars(header->data(), end, seq);
  if (error != std::errc() || stop != end || seq < 0) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "INVALID_LAST_EVENT_ID",
                          "Last-Event-ID is the id of an event this stream sent");
  }
  return seq;
}

}  // namespace aevatar::orchestrator
