// AdmissionCache's bounds and forgetting, and ConfirmedFactsDigest: a digest
// is reused only when it covers exactly the two documents a decision read.
#include "aevatar/admission/admission_cache.h"

#include <chrono>
#include <thread>

#include "aevatar/clients/nyxid_route_writer.h"
#include "base/crypto.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

AdmissionCache::Admission AdmissionOn(const std::string& route_id, const std::string& digest) {
  return {AdmittedRoute{route_id, "chrono-sandbox", "chrono-sandbox"}, digest};
}

TEST(AdmissionCache, RemembersPerCredentialAndNeverWithoutADigest) {
  AdmissionCache cache;
  cache.Remember("token-a", AdmissionOn("us_a", "digest-a"));
  cache.Remember("token-b", AdmissionOn("us_b", ""));
  ASSERT_TRUE(cache.Find("token-a").has_value());
  EXPECT_EQ(cache.Find("token-a")->route.user_service_id, "us_a");
  EXPECT_EQ(cache.Find("token-a")->facts_digest, "digest-a");
  EXPECT_FALSE(cache.Find("token-b").has_value());
  EXPECT_FALSE(cache.Find("token-c").has_value());
}

TEST(AdmissionCache, ForgetsOnlyTheAdmissionMadeOnTheStaleDigest) {
  AdmissionCache cache;
  cache.Remember("token", AdmissionOn("us_1", "new-digest"));
  cache.Forget("token", "old-digest");  // a concurrent call's stale reuse
  EXPECT_TRUE(cache.Find("token").has_value());
  cache.Forget("token", "new-digest");
  EXPECT_FALSE(cache.Find("token").has_value());
}

TEST(AdmissionCache, EntriesExpire) {
  AdmissionCache cache({.ttl = std::chrono::seconds(0), .capacity = 8});
  cache.Remember("token", AdmissionOn("us_1", "digest"));
  EXPECT_FALSE(cache.Find("token").has_value());
}

TEST(AdmissionCache, AFullCacheDropsTheEntryClosestToExpiry) {
  AdmissionCache cache({.ttl = std::chrono::seconds(60), .capacity = 2});
  cache.Remember("first", AdmissionOn("us_1", "d1"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a later expiry
  cache.Remember("second", AdmissionOn("us_2", "d2"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  cache.Remember("third", AdmissionOn("us_3", "d3"));
  EXPECT_FALSE(cache.Find("first").has_value());
  EXPECT_TRUE(cache.Find("second").has_value());
  EXPECT_TRUE(cache.Find("third").has_value());
}

TEST(ConfirmedFactsDigest, HoldsOnlyForTheExactBodiesRead) {
  const std::string me = R"({"id":"u1","orgs":[]})";
  const std::string keys = R"({"keys":[]})";
  const std::string digest = base::Sha256Hex(me + "\n" + keys);
  EXPECT_EQ(ConfirmedFactsDigest(me, {digest, keys}), digest);
  // /me changed between the two reads: NyxID hashed another /me.
  EXPECT_EQ(ConfirmedFactsDigest(R"({"id":"u1","orgs":[{"id":"o1"}]})", {digest, keys}), "");
  EXPECT_EQ(ConfirmedFactsDigest(me, {digest, R"({"keys":[1]})"}), "");
  EXPECT_EQ(ConfirmedFactsDigest(me, {"", keys}), "");
}

}  // namespace
}  // namespace aevatar::orchestrator
