#ifndef AEVATAR_AEVATAR_API_RUN_LISTING_H_
#define AEVATAR_AEVATAR_API_RUN_LISTING_H_

// GET /api/workflow-runs' query: which of the caller's runs, how many, and
// from where (the cursor: base/page_cursor.h, naming the previous page's
// last run), and the events route's Last-Event-ID.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "aevatar/runtime/workflow_store.h"

namespace aevatar::orchestrator {

inline constexpr int kDefaultRunPage = 50;
inline constexpr int kMaxRunPage = 100;

// The cursor naming the run after which the next page starts.
std::string EncodeRunCursor(const RunListPosition& position);

// The query for `owner` from the request's `status`, `workflow_id`, `limit`
// and `cursor` parameters (each optional). 400 INVALID_STATUS for a status
// that is not a run phase, INVALID_LIMIT for a limit outside 1..kMaxRunPage
// or not a decimal integer, INVALID_CURSOR for a cursor EncodeRunCursor did
// not make. `limit` in the returned query is one more than the page, so the
// store's answer tells whether another page follows.
absl::StatusOr<RunListQuery> RunListQueryOf(const std::string& owner,
                                            const std::optional<std::string>& status,
                                            const std::optional<std::string>& workflow_id,
                                            const std::optional<std::string>& limit,
                                            const std::optional<std::string>& cursor);

// Returns the id of the last event a client saw, from a Last-Event-ID header
// value: a decimal event sequence number >= 0. Absent or empty: 0 (from the
// start). 400 INVALID_LAST_EVENT_ID otherwise.
absl::StatusOr<int64_t> LastEventIdOf(const std::optional<std::string>& header);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_RUN_LISTING_H_
