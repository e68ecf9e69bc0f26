// The SkillStore contract, on SQLite and PostgreSQL alike: a published
// name@version never changes, a name belongs to its first publisher,
// concurrent publishers store a version once, mounts are kept whole.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "aevatar/skills/skill_bundle.h"
#include "aevatar/skills/skill_store.h"
#include "base/api_error.h"
#include "gtest/gtest.h"
#include "skills/hello_skill.h"
#include "stores/store_backends.h"

namespace aevatar::orchestrator {
namespace {

using skilltest::kHelloWorkflow;

SkillVersion Skill(const std::string& name, const std::string& version,
                   const std::string& description, const std::string& publisher) {
  SkillBundle bundle;
  bundle.manifest_yaml =
      "name: " + name + "\nversion: " + version + "\ndescription: " + description + "\n";
  bundle.assets["hello-check.yaml"] = kHelloWorkflow;
  auto skill = ValidateSkillBundle(bundle);
  EXPECT_TRUE(skill.ok()) << skill.status();
  skill->publisher = publisher;
  skill->published_at_ms = 1000;
  return *skill;
}

class SkillStoreSuite : public ::testing::TestWithParam<TestBackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam()();
    if (IsSkipped()) return;
    ASSERT_NE(backend_, nullptr);
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }
  std::unique_ptr<SkillStore> Open() {
    auto store = backend_->backend().OpenSkills();
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  std::unique_ptr<TestBackend> backend_;
  std::unique_ptr<SkillStore> store_;
};

AEVATAR_STORE_SUITE_ON_BOTH_BACKENDS(SkillStoreSuite);

TEST_P(SkillStoreSuite, PublishesAndReadsBackAVersionWhole) {
  const SkillVersion skill = Skill("hello", "1.0.0", "says hello", "user-1");
  ASSERT_EQ(store_->Publish(skill).value(), PublishOutcome::kCreated);
  std::unique_ptr<SkillStore> reopened = Open();  // a restart or a replica
  auto read = reopened->GetVersion("hello", "1.0.0");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->description, "says hello");
  EXPECT_EQ(read->digest, skill.digest);
  EXPECT_EQ(read->publisher, "user-1");
  EXPECT_EQ(read->published_at_ms, 1000);
  EXPECT_EQ(read->bundle.manifest_yaml, skill.bundle.manifest_yaml);
  EXPECT_EQ(read->bundle.assets, skill.bundle.assets);
  EXPECT_EQ(SkillDigest(read->bundle), skill.digest);  // the bytes are exactly the published ones
  EXPECT_EQ(base::ApiCode(reopened->GetVersion("hello", "2.0.0").status()), "SKILL_NOT_FOUND");
}

TEST_P(SkillStoreSuite, SameDigestIsIdempotentAnotherDigestIs409) {
  ASSERT_EQ(store_->Publish(Skill("hello", "1.0.0", "one", "user-1")).value(),
            PublishOutcome::kCreated);
  EXPECT_EQ(store_->Publish(Skill("hello", "1.0.0", "one", "user-1")).value(),
            PublishOutcome::kUnchanged);
  auto changed = store_->Publish(Skill("hello", "1.0.0", "two", "user-1"));
  EXPECT_EQ(base::ApiCode(changed.status()), "SKILL_VERSION_IMMUTABLE");
  EXPECT_EQ(base::HttpStatusFor(changed.status()), 409);
  EXPECT_EQ(store_->GetVersion("hello", "1.0.0")->description, "one");
  EXPECT_EQ(store_->Publish(Skill("hello", "1.1.0", "two", "user-1")).value(),
            PublishOutcome::kCreated);
}

TEST_P(SkillStoreSuite, ANameBelongsToItsFirstPublisher) {
  ASSERT_TRUE(store_->Publish(Skill("hello", "1.0.0", "one", "user-1")).ok());
  auto other = store_->Publish(Skill("hello", "2.0.0", "two", "user-2"));
  EXPECT_EQ(base::ApiCode(other.status()), "SKILL_NAME_OWNED");
  EXPECT_EQ(base::HttpStatusFor(other.status()), 403);
  EXPECT_TRUE(store_->Publish(Skill("other", "1.0.0", "mine", "user-2")).ok());
}

// The aevatar- prefix is the bundled publisher's, even where no bundled
// skill of that name was published (first come would otherwise own it).
TEST_P(SkillStoreSuite, TheAevatarPrefixIsReservedForTheBundledPublisher) {
  auto squat = store_->Publish(Skill("aevatar-codex-exec-workflow-sample", "9.0.0", "x", "user-1"));
  EXPECT_EQ(base::ApiCode(squat.status()), "SKILL_NAME_RESERVED");
  EXPECT_EQ(base::HttpStatusFor(squat.status()), 403);
  EXPECT_TRUE(store_->ListVersions("aevatar-codex-exec-workflow-sample")->empty());
  EXPECT_EQ(
      store_->Publish(Skill("aevatar-codex-exec-workflow-sample", "1.0.0", "x", kBundledPublisher))
          .value(),
      PublishOutcome::kCreated);
  EXPECT_TRUE(store_->Publish(Skill("my-aevatar-skill", "1.0.0", "mine", "user-1")).ok());
}

TEST_P(SkillStoreSuite, ListsVersionsByNameThenPublicationTime) {
  SkillVersion late = Skill("b-skill", "2.0.0", "two", "user-1");
  late.published_at_ms = 3000;
  ASSERT_TRUE(store_->Publish(late).ok());
  ASSERT_TRUE(store_->Publish(Skill("b-skill", "1.0.0", "one", "user-1")).ok());
  ASSERT_TRUE(store_->Publish(Skill("a-skill", "0.1.0", "a", "user-2")).ok());
  auto all = store_->ListVersions("");
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].name + "@" + (*all)[0].version, "a-skill@0.1.0");
  EXPECT_EQ((*all)[1].name + "@" + (*all)[1].version, "b-skill@1.0.0");
  EXPECT_EQ((*all)[2].name + "@" + (*all)[2].version, "b-skill@2.0.0");
  EXPECT_TRUE((*all)[2].bundle.assets.empty());  // listings carry no content
  EXPECT_EQ(store_->ListVersions("b-skill")->size(), 2u);
  EXPECT_TRUE(store_->ListVersions("none")->empty());
}

TEST_P(SkillStoreSuite, ConcurrentPublishersStoreAVersionOnce) {
  constexpr int kThreads = 4;
  std::atomic<int> created{0}, unchanged{0}, failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      std::unique_ptr<SkillStore> own = Open();  // one store per replica
      auto outcome = own->Publish(Skill("race", "1.0.0", "same", "user-1"));
      if (!outcome.ok()) {
        ++failed;
      } else if (*outcome == PublishOutcome::kCreated) {
        ++created;
      } else {
        ++unchanged;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(unchanged.load(), kThreads - 1);
  EXPECT_EQ(store_->ListVersions("race")->size(), 1u);
}

TEST_P(SkillStoreSuite, KeepsAndReplacesMounts) {
  SkillMount mount;
  mount.mount_id = "mnt_1";
  mount.owner = "user-1";
  mount.name = "hello";
  mount.version = "1.0.0";
  mount.digest = "sha256:" + std::string(64, 'a');
  mount.state = "mounting";
  mount.workflows = {{{"workflow_id", "hello-check"}, {"state", "pending"}}};
  mount.diagnostic_id = "diag-1";
  mount.created_at_ms = mount.updated_at_ms = 10;
  ASSERT_TRUE(store_->PutMount(mount).ok());
  mount.state = "failed";
  mount.workflows[0]["state"] = "failed";
  mount.error_code = "ROUTE_NOT_CONFIGURED";
  mount.error_detail = "no route";
  mount.updated_at_ms = 20;
  ASSERT_TRUE(store_->PutMount(mount).ok());
  auto read = Open()->GetMount("mnt_1");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->owner, "user-1");
  EXPECT_EQ(read->state, "failed");
  EXPECT_EQ(read->workflows, mount.workflows);
  EXPECT_EQ(read->error_code, "ROUTE_NOT_CONFIGURED");
  EXPECT_EQ(read->error_detail, "no route");
  EXPECT_EQ(read->diagnostic_id, "diag-1");
  EXPECT_EQ(read->created_at_ms, 10);
  EXPECT_EQ(read->updated_at_ms, 20);
  EXPECT_EQ(base::ApiCode(store_->GetMount("mnt_2").status()), "SKILL_MOUNT_NOT_FOUND");
  mount.state = "bogus";  // the schema admits only the three states
  EXPECT_FALSE(store_->PutMount(mount).ok());
}

}  // namespace
}  // namespace aevatar::orchestrator
