#include "base/page_cursor.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/crypto.h"

namespace aevatar::base {
namespace {

constexpr std::string_view kCursorVersion = "p1:";

absl::Status BadCursor() {
  return ApiError(absl::StatusCode::kInvalidArgument, "INVALID_CURSOR",
                  "the cursor is not one this listing returned; start without one");
}

}  // namespace

std::string EncodePageCursor(const PagePosition& position) {
  return Base64UrlEncode(std::string(kCursorVersion) + std::to_string(position.created_at_ms) +
                         ":" + position.id);
}

absl::StatusOr<PagePosition> DecodePageCursor(std::string_view cursor) {
  auto text = Base64UrlDecode(cursor);
  if (!text.ok() || !std::string_view(*text).starts_with(kCursorVersion)) return BadCursor();
  std::string_view rest = std::string_view(*text).substr(kCursorVersion.size());
  const size_t colon = rest.find(':');
  PagePosition position;
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) {
    return BadCursor();
  }
  const auto [end, error] =
      std::from_chars(rest.data(), rest.data() + colon, position.created_at_ms);
  if (error != std::errc() || end != rest.data() + colon || position.created_at_ms < 0) {
    return BadCursor();
  }
  position.id = std::string(rest.substr(colon + 1));
  return position;
}

absl::StatusOr<int> PageLimitOf(const std::optional<std::string>& limit, int default_limit,
                                int max_limit) {
  if (!limit) return default_limit;
  int value = 0;
  const char* end = limit->data() + limit->size();
  const auto [stop, error] = std::from_chars(limit->data(), end, value);
  if (error != std::errc() || stop != end || value < 1 || value > max_limit) {
    return ApiError(absl::StatusCode::kInvalidArgument, "INVALID_LIMIT",
                    absl::StrCat("limit is an integer from 1 to ", max_limit));
  }
  return value;
}

}  // namespace aevatar::base
