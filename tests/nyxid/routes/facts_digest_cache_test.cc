// FactsDigestCache serves a digest only at the generation it was remembered
// under, for exactly the caller whose credential it was computed for.
#include "nyxid/routes/facts_digest_cache.h"

#include "gtest/gtest.h"

namespace aevatar::nyxid {
namespace {

Principal Alice() {
  Principal caller;
  caller.user.id = "usr_a";
  caller.kind = CredentialKind::kAccess;
  caller.scopes = {"account:read", "proxy:*"};
  return caller;
}

TEST(FactsDigestCache, ServesADigestOnlyAtTheGenerationItWasRememberedUnder) {
  FactsDigestCache cache;
  const std::string key = FactsKeyOf(Alice());
  EXPECT_EQ(cache.Find(key, 7), std::nullopt);
  cache.Remember(key, 7, "digest-7");
  EXPECT_EQ(cache.Find(key, 7), "digest-7");
  EXPECT_EQ(cache.Find(key, 8), std::nullopt) << "the facts moved";
  cache.Remember(key, 8, "digest-8");
  EXPECT_EQ(cache.Find(key, 8), "digest-8");
  EXPECT_EQ(cache.Find("usr_b", 8), std::nullopt);
}

TEST(FactsDigestCache, ADigestOfAnOlderGenerationNeverReplacesTheNewerOnes) {
  FactsDigestCache cache;
  cache.Remember("a", 9, "digest-9");
  cache.Remember("b", 8, "digest-8 of a slow reader");
  EXPECT_EQ(cache.Find("a", 9), "digest-9");
  EXPECT_EQ(cache.Find("b", 9), std::nullopt);
  EXPECT_EQ(cache.Find("b", 8), std::nullopt);
}

// A store restored from a backup climbs again through numbers that named
// other facts: once a generation behind is seen, nothing is served from before.
TEST(FactsDigestCache, AGenerationThatWentBackForgetsEverything) {
  FactsDigestCache cache;
  cache.Remember("a", 9, "digest-9");
  EXPECT_EQ(cache.Find("a", 5), std::nullopt);
  EXPECT_EQ(cache.Find("a", 9), std::nullopt);
}

TEST(FactsDigestCache, StartsAfreshPastItsCapacity) {
  FactsDigestCache cache(2);
  cache.Remember("a", 1, "A");
  cache.Remember("b", 1, "B");
  cache.Remember("c", 1, "C");
  EXPECT_EQ(cache.Find("a", 1), std::nullopt);
  EXPECT_EQ(cache.Find("c", 1), "C");
}

// Two credentials of one account may see different facts (scopes, an Agent
// Key's allowed services, a delegation token's audience): never one key.
TEST(FactsKeyOf, TellsApartEveryCredentialDetailTheDocumentsShow) {
  const Principal alice = Alice();
  Principal agent = alice;
  agent.kind = CredentialKind::kAgentKey;
  agent.scopes.clear();
  agent.agent_key = AgentKeyRecord{};
  agent.agent_key->id = "ak_1";
  Principal other_key = agent;
  other_key.agent_key->id = "ak_2";
  Principal narrower = alice;
  narrower.scopes = {"proxy:*"};
  Principal delegation = alice;
  delegation.kind = CredentialKind::kDelegation;
  Principal other_audience = delegation;
  other_audience.audience = "chrono-llm-public";
  Principal same = alice;
  same.credential = "another token of the same kind and scopes";

  const std::vector<Principal> distinct = {alice,    agent,      other_key,
                                           narrower, delegation, other_audience};
  for (size_t i = 0; i < distinct.size(); ++i) {
    for (size_t j = i + 1; j < distinct.size(); ++j) {
      EXPECT_NE(FactsKeyOf(distinct[i]), FactsKeyOf(distinct[j])) << i << " vs " << j;
    }
  }
  EXPECT_EQ(FactsKeyOf(same), FactsKeyOf(alice));
}

}  // namespace
}  // namespace aevatar::nyxid
