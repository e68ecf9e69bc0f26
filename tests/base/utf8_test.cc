#include "base/utf8.h"

#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

TEST(ToValidUtf8, KeepsValidTextAndReplacesInvalidBytes) {
  EXPECT_EQ(ToValidUtf8("héllo 世界 🎉"), "héllo 世界 🎉");
  EXPECT_EQ(ToValidUtf8(std::string("a\xff"
                                    "b",
                                    3)),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ToValidUtf8(std::string("\xe4\xb8", 2)), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(ToValidUtf8(std::string("\xed\xa0\x80", 3)).find("\xed"), std::string::npos);
}

TEST(IsValidUtf8, RefusesStraySurrogateAndTruncatedBytes) {
  EXPECT_TRUE(IsValidUtf8("héllo 世界 🎉"));
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_FALSE(IsValidUtf8(std::string("a\xff", 2)));
  EXPECT_FALSE(IsValidUtf8(std::string("\xe4\xb8", 2)));
  EXPECT_FALSE(IsValidUtf8(std::string("\xed\xa0\x80", 3)));
  EXPECT_FALSE(IsValidUtf8(std::string("\xc0\xaf", 2)));
}

}  // namespace
}  // namespace aevatar::base
