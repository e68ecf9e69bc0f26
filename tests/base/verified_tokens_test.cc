#include "base/verified_tokens.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

std::shared_ptr<const VerifiedTokens::Entry> EntryFor(std::string_view token, std::string kid) {
  auto entry = std::make_shared<VerifiedTokens::Entry>();
  entry->digest = VerifiedTokens::DigestOf(token);
  entry->kid = std::move(kid);
  return entry;
}

TEST(VerifiedTokens, AHitNeedsExactlyTheSameTokenBytes) {
  VerifiedTokens remembered;
  EXPECT_EQ(remembered.Find(VerifiedTokens::DigestOf("a.b.c")), nullptr);
  remembered.Remember(EntryFor("a.b.c", "k1"));
  std::shared_ptr<const VerifiedTokens::Entry> hit =
      remembered.Find(VerifiedTokens::DigestOf("a.b.c"));
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->kid, "k1");
  EXPECT_EQ(remembered.Find(VerifiedTokens::DigestOf("a.b.C")), nullptr);
  EXPECT_EQ(remembered.Find(VerifiedTokens::DigestOf("a.b.c ")), nullptr);
}

TEST(VerifiedTokens, ANewTokenReplacesWhicheverSharedItsSlotAndNothingElse) {
  VerifiedTokens remembered;
  // More tokens than slots: every slot is taken over at least once.
  for (size_t i = 0; i < 3 * VerifiedTokens::kSlots; ++i) {
    remembered.Remember(EntryFor("token-" + std::to_string(i), "k"));
  }
  size_t still_remembered = 0;
  for (size_t i = 0; i < 3 * VerifiedTokens::kSlots; ++i) {
    if (remembered.Find(VerifiedTokens::DigestOf("token-" + std::to_string(i)))) ++still_remembered;
  }
  EXPECT_LE(still_remembered, VerifiedTokens::kSlots);
  EXPECT_GT(still_remembered, 0u);
  // The last one remembered always holds its slot.
  const std::string last = "token-" + std::to_string(3 * VerifiedTokens::kSlots - 1);
  EXPECT_NE(remembered.Find(VerifiedTokens::DigestOf(last)), nullptr);
}

}  // namespace
}  // namespace aevatar::base
