#ifndef AEVATAR_BASE_PAGE_CURSOR_H_
#define AEVATAR_BASE_PAGE_CURSOR_H_

// Keyset pagination shared by the listing routes (aevatar's
// /api/workflow-runs, chrono-sandbox's /executions): items are listed by
// (created_at_ms, id), both descending, and a page's cursor names its last
// item. The cursor is opaque to callers (versioned, base64url) and carries
// no authority: a listing always scopes to the caller itself, so a forged
// cursor can only skip within the caller's own items.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace aevatar::base {

// The last item of a page.
struct PagePosition {
  int64_t created_at_ms = 0;
  std::string id;
};

// The cursor naming `position`.
std::string EncodePageCursor(const PagePosition& position);
// Requires a cursor EncodePageCursor made; 400 INVALID_CURSOR otherwise.
absl::StatusOr<PagePosition> DecodePageCursor(std::string_view cursor);

// A `limit` query parameter: absent gives `default_limit`; otherwise a
// decimal integer in 1..max_limit, else 400 INVALID_LIMIT.
absl::StatusOr<int> PageLimitOf(const std::optional<std::string>& limit, int default_limit,
                                int max_limit);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_PAGE_CURSOR_H_
