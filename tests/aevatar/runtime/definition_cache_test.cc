// The runtime's cache of validated workflow definitions, by content digest.
#include "aevatar/runtime/definition_cache.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

std::shared_ptr<const WorkflowDefinition> Definition(const std::string& id,
                                                     const std::string& digest) {
  auto definition = std::make_shared<WorkflowDefinition>();
  definition->workflow_id = id;
  definition->digest = digest;
  return definition;
}

TEST(DefinitionCacheTest, FindsADefinitionByItsDigestOnly) {
  DefinitionCache cache;
  cache.Put(Definition("a", "sha256:aa"));
  ASSERT_NE(cache.Find("sha256:aa"), nullptr);
  EXPECT_EQ(cache.Find("sha256:aa")->workflow_id, "a");
  EXPECT_EQ(cache.Find("sha256:bb"), nullptr);
  EXPECT_EQ(cache.Find(""), nullptr);
}

TEST(DefinitionCacheTest, ADefinitionWithoutADigestIsNotKept) {
  DefinitionCache cache;
  cache.Put(Definition("a", ""));
  cache.Put(nullptr);
  EXPECT_EQ(cache.Find(""), nullptr);
}

TEST(DefinitionCacheTest, TheFirstEntryForADigestStays) {
  DefinitionCache cache;
  cache.Put(Definition("first", "sha256:aa"));
  cache.Put(Definition("second", "sha256:aa"));
  EXPECT_EQ(cache.Find("sha256:aa")->workflow_id, "first");
}

TEST(DefinitionCacheTest, PastItsCapacityTheOldestIsForgotten) {
  DefinitionCache cache(2);
  cache.Put(Definition("a", "sha256:aa"));
  cache.Put(Definition("b", "sha256:bb"));
  cache.Put(Definition("c", "sha256:cc"));
  EXPECT_EQ(cache.Find("sha256:aa"), nullptr);
  EXPECT_NE(cache.Find("sha256:bb"), nullptr);
  EXPECT_NE(cache.Find("sha256:cc"), nullptr);
}

TEST(DefinitionCacheTest, ACacheOfNoCapacityKeepsNothing) {
  DefinitionCache cache(0);
  cache.Put(Definition("a", "sha256:aa"));
  EXPECT_EQ(cache.Find("sha256:aa"), nullptr);
}

}  // namespace
}  // namespace aevatar::orchestrator
