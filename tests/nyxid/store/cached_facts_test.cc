// CachedFacts reads the store once per key and facts generation, and never
// keeps a failed lookup.
#include "nyxid/store/cached_facts.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace aevatar::nyxid {
namespace {

// A test double of the store's facts reads: finds every id but "missing",
// and counts the reads that reach it.
class CountingReads : public FactsReads {
 public:
  int reads = 0;

  absl::StatusOr<User> FindUserById(const std::string& id) override {
    ++reads;
    if (id == "missing") return absl::NotFoundError("no such user");
    User user;
    user.id = id;
    user.username = "read #" + std::to_string(reads);
    user.password_hash = "$argon2id$a-hash";
    return user;
  }
  absl::StatusOr<std::vector<Membership>> MembershipsOfUser(const std::string&) override {
    ++reads;
    return std::vector<Membership>(1);
  }
  absl::StatusOr<AgentKeyRecord> FindAgentKeyByHash(const std::string& hash) override {
    ++reads;
    AgentKeyRecord key;
    key.key_hash_hex = hash;
    return key;
  }
  absl::StatusOr<CatalogService> FindCatalogService(const std::string& id) override {
    ++reads;
    CatalogService service;
    service.id = id;
    if (id == "cat_llm") service.provider_api_key = "sk-provider-key";
    return service;
  }
  absl::StatusOr<UserService> FindUserService(const std::string& id) override {
    ++reads;
    UserService service;
    service.id = id;
    return service;
  }
};

TEST(CachedFacts, EachKeyIsReadOncePerGenerationAndAgainWhenItMoves) {
  CountingReads store;
  CachedFacts cached(&store);
  EXPECT_EQ(cached.At(5)->FindUserById("usr_a")->username, "read #1");
  EXPECT_EQ(cached.At(5)->FindUserById("usr_a")->username, "read #1");
  EXPECT_EQ(cached.At(5)->FindUserById("usr_b")->username, "read #2");
  EXPECT_EQ(cached.At(6)->FindUserById("usr_a")->username, "read #3") << "the facts moved";
  EXPECT_EQ(store.reads, 3);

  std::unique_ptr<FactsReads> at7 = cached.At(7);
  for (int twice = 0; twice < 2; ++twice) {
    EXPECT_EQ(at7->MembershipsOfUser("usr_a")->size(), 1u);
    EXPECT_EQ(at7->FindAgentKeyByHash("ab12")->key_hash_hex, "ab12");
    EXPECT_EQ(at7->FindCatalogService("cat_x")->id, "cat_x");
    EXPECT_EQ(at7->FindUserService("us_x")->id, "us_x");
  }
  EXPECT_EQ(store.reads, 7);
}

TEST(CachedFacts, NoSecretIsKeptAPasswordHashIsNeverGivenAndAProviderKeyIsReadEachTime) {
  CountingReads store;
  CachedFacts cached(&store);
  EXPECT_EQ(cached.At(5)->FindUserById("usr_a")->password_hash, "");
  EXPECT_EQ(cached.At(5)->FindUserById("usr_a")->password_hash, "");
  EXPECT_EQ(cached.At(5)->FindCatalogService("cat_llm")->provider_api_key, "sk-provider-key");
  EXPECT_EQ(cached.At(5)->FindCatalogService("cat_llm")->provider_api_key, "sk-provider-key");
  EXPECT_EQ(store.reads, 3);
}

TEST(CachedFacts, AFailedLookupIsAskedAgain) {
  CountingReads store;
  CachedFacts cached(&store);
  EXPECT_TRUE(absl::IsNotFound(cached.At(5)->FindUserById("missing").status()));
  EXPECT_TRUE(absl::IsNotFound(cached.At(5)->FindUserById("missing").status()));
  EXPECT_EQ(store.reads, 2);
}

}  // namespace
}  // namespace aevatar::nyxid
