// Keyset cursors of the listing routes: they round-trip, and anything else is
// a typed 400, never a crash or a silent first page.
#include "base/page_cursor.h"

#include "base/api_error.h"
#include "base/crypto.h"
#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

TEST(PageCursor, RoundTripsItsPosition) {
  const PagePosition position{1764680000123, "run_01HXYZ:with:colons"};
  auto back = DecodePageCursor(EncodePageCursor(position));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->created_at_ms, position.created_at_ms);
  EXPECT_EQ(back->id, position.id);
}

TEST(PageCursor, ForeignCursorsAreInvalidCursor) {
  for (const std::string& cursor :
       {std::string("not base64!"), std::string(""), Base64UrlEncode("p2:1:run"),
        Base64UrlEncode("p1:abc:run"), Base64UrlEncode("p1:-5:run"), Base64UrlEncode("p1:100:"),
        Base64UrlEncode("p1:100"), Base64UrlEncode("p1:99999999999999999999:run")}) {
    auto decoded = DecodePageCursor(cursor);
    ASSERT_FALSE(decoded.ok()) << cursor;
    EXPECT_EQ(HttpStatusFor(decoded.status()), 400);
    EXPECT_EQ(ApiCode(decoded.status()), "INVALID_CURSOR");
  }
}

TEST(PageCursor, LimitIsBounded) {
  EXPECT_EQ(*PageLimitOf(std::nullopt, 20, 100), 20);
  EXPECT_EQ(*PageLimitOf("1", 20, 100), 1);
  EXPECT_EQ(*PageLimitOf("100", 20, 100), 100);
  for (const char* bad : {"0", "-1", "101", "ten", "5x", "", "1e2"}) {
    auto limit = PageLimitOf(std::string(bad), 20, 100);
    ASSERT_FALSE(limit.ok()) << bad;
    EXPECT_EQ(HttpStatusFor(limit.status()), 400);
    EXPECT_EQ(ApiCode(limit.status()), "INVALID_LIMIT") << bad;
  }
}

}  // namespace
}  // namespace aevatar::base
