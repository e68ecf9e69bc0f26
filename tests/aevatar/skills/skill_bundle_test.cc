#include "aevatar/skills/skill_bundle.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "aevatar/skills/skill_dir.h"
#include "aevatar/skills/skill_requests.h"
#include "aevatar/skills/skill_store.h"
#include "base/api_error.h"
#include "gtest/gtest.h"
#include "skills/hello_skill.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kManifest[] = "name: hello\nversion: 1.2.3\ndescription: says hello\n";
using skilltest::kHelloWorkflow;

SkillBundle Bundle() {
  SkillBundle bundle;
  bundle.manifest_yaml = kManifest;
  bundle.assets["hello-check.yaml"] = kHelloWorkflow;
  return bundle;
}

std::string CodeOf(const SkillBundle& bundle) {
  return base::ApiCode(ValidateSkillBundle(bundle).status());
}

TEST(SkillBundle, ValidatesManifestAndWorkflows) {
  auto skill = ValidateSkillBundle(Bundle());
  ASSERT_TRUE(skill.ok()) << skill.status();
  EXPECT_EQ(skill->name, "hello");
  EXPECT_EQ(skill->version, "1.2.3");
  EXPECT_EQ(skill->description, "says hello");
  ASSERT_EQ(skill->workflows.size(), 1u);
  EXPECT_EQ(skill->workflows[0].file, "hello-check.yaml");
  EXPECT_EQ(skill->workflows[0].workflow_id, "hello-check");
  EXPECT_EQ(skill->workflows[0].digest.rfind("sha256:", 0), 0u);
  EXPECT_TRUE(IsSkillDigest(skill->digest));
  EXPECT_EQ(skill->digest, SkillDigest(Bundle()));
}

TEST(SkillBundle, RefusesBadManifestsWithTypedCodes) {
  auto with_manifest = [](const std::string& text) {
    SkillBundle bundle = Bundle();
    bundle.manifest_yaml = text;
    return CodeOf(bundle);
  };
  EXPECT_EQ(with_manifest("name: hello\nversion: 1.2.x\ndescription: x\n"),
            "SKILL_VERSION_INVALID");
  // A YAML number is not a version string: 1.2 reads as a float.
  EXPECT_EQ(with_manifest("name: hello\nversion: 1.2\ndescription: x\n"), "SKILL_INVALID");
  EXPECT_EQ(with_manifest("name: Hello\nversion: 1.2.3\ndescription: x\n"), "SKILL_INVALID");
  EXPECT_EQ(with_manifest("name: hello\nversion: 1.2.3\n"), "SKILL_INVALID");
  EXPECT_EQ(with_manifest("name: hello\nversion: 1.2.3\ndescription: ''\n"), "SKILL_INVALID");
  EXPECT_EQ(with_manifest("name: hello\nversion: 1.2.3\ndescription: x\nextra: y\n"),
            "SKILL_INVALID");
  EXPECT_EQ(with_manifest("name: hello\nversion: [1]\ndescription: x\n"), "SKILL_INVALID");
  EXPECT_EQ(with_manifest("- a list\n"), "SKILL_INVALID");
  EXPECT_EQ(with_manifest("name: [unclosed\n"), "SKILL_INVALID");
  EXPECT_EQ(with_manifest(std::string(kMaxSkillManifestBytes + 1, '#')), "SKILL_INVALID");
}

TEST(SkillBundle, RefusesBadAssets) {
  SkillBundle none = Bundle();
  none.assets.clear();
  EXPECT_EQ(CodeOf(none), "SKILL_INVALID");
  SkillBundle bad_name = Bundle();
  bad_name.assets["../escape.yaml"] = kHelloWorkflow;
  EXPECT_EQ(CodeOf(bad_name), "SKILL_INVALID");
  SkillBundle bad_workflow = Bundle();
  bad_workflow.assets["broken.yaml"] = "workflow_id: x\nsteps: []\n";
  EXPECT_EQ(CodeOf(bad_workflow), "WORKFLOW_INVALID");
  EXPECT_NE(
      std::string(ValidateSkillBundle(bad_workflow).status().message()).find("assets/broken.yaml"),
      std::string::npos);
  SkillBundle twice = Bundle();
  twice.assets["again.yaml"] = kHelloWorkflow;  // same workflow_id
  EXPECT_EQ(CodeOf(twice), "SKILL_INVALID");
  SkillBundle route = Bundle();
  route.assets["route.yaml"] = std::string(kHelloWorkflow) + "route: us_1\n";
  EXPECT_EQ(CodeOf(route), "WORKFLOW_ROUTE_SELECTOR_FORBIDDEN");
}

// A mount saves the skill's workflows as the mounter's: a schedule or a
// webhook in one would run the publisher's workflow unattended on the
// mounter's Agent Key.
TEST(SkillBundle, RefusesWorkflowsThatDeclareTriggers) {
  for (const char* trigger : {"cron: '* * * * *'", "webhook: {}"}) {
    SkillBundle bundle = Bundle();
    bundle.assets["hello-check.yaml"] =
        std::string(kHelloWorkflow) + "triggers:\n  - " + trigger + "\n";
    auto refused = ValidateSkillBundle(bundle);
    ASSERT_FALSE(refused.ok()) << trigger;
    EXPECT_EQ(base::ApiCode(refused.status()), "SKILL_TRIGGERS_FORBIDDEN");
    EXPECT_EQ(base::HttpStatusFor(refused.status()), 400);
    EXPECT_NE(refused.status().message().find("assets/hello-check.yaml"), std::string_view::npos);
  }
}

TEST(SkillBundle, DigestCoversEveryByteAndNameButNotOrder) {
  const std::string base = SkillDigest(Bundle());
  SkillBundle comment = Bundle();
  comment.manifest_yaml += "# a comment\n";
  EXPECT_NE(SkillDigest(comment), base);
  SkillBundle renamed;
  renamed.manifest_yaml = kManifest;
  renamed.assets["hello-check2.yaml"] = kHelloWorkflow;
  EXPECT_NE(SkillDigest(renamed), base);
  // Moving a byte from an asset to the manifest changes it (length-prefixed).
  SkillBundle shifted;
  shifted.manifest_yaml = std::string(kManifest) + "w";
  shifted.assets["hello-check.yaml"] = std::string(kHelloWorkflow).substr(1);
  EXPECT_NE(SkillDigest(shifted), base);
  SkillBundle two_a = Bundle(), two_b;
  two_a.assets["zz.yaml"] = "x";
  two_b.assets["zz.yaml"] = "x";  // inserted in the other order
  two_b.manifest_yaml = kManifest;
  two_b.assets["hello-check.yaml"] = kHelloWorkflow;
  EXPECT_EQ(SkillDigest(two_a), SkillDigest(two_b));
}

TEST(SkillBundle, RefsAndLatest) {
  auto ref = ParseSkillRef("hello@1.2.3");
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->name, "hello");
  EXPECT_EQ(ref->version, "1.2.3");
  EXPECT_FALSE(ParseSkillRef("hello")->version.has_value());
  EXPECT_EQ(base::ApiCode(ParseSkillRef("hello@1").status()), "SKILL_VERSION_INVALID");
  EXPECT_EQ(base::ApiCode(ParseSkillRef("../x").status()), "SKILL_INVALID");
  EXPECT_EQ(LatestVersion({"1.0.0", "1.10.0", "1.9.0", "2.0.0-rc.1"}), "1.10.0");
  EXPECT_EQ(LatestVersion({"2.0.0-rc.1", "2.0.0-beta"}), "2.0.0-rc.1");
  EXPECT_FALSE(LatestVersion({}).has_value());
}

TEST(SkillRequests, TypedErrorsForBodies) {
  EXPECT_EQ(base::ApiCode(ParsePublishRequest("[]").status()), "MALFORMED_JSON");
  EXPECT_EQ(base::ApiCode(ParsePublishRequest(R"({"skill_yaml": 1, "assets": {}})").status()),
            "INVALID_FIELD_TYPE");
  EXPECT_EQ(
      base::ApiCode(ParsePublishRequest(R"({"skill_yaml": "x", "assets": {"a": 2}})").status()),
      "INVALID_FIELD_TYPE");
  auto publish = ParsePublishRequest(R"({"skill_yaml": "x", "assets": {"a.yaml": "y"}})");
  ASSERT_TRUE(publish.ok());
  EXPECT_EQ(publish->assets.at("a.yaml"), "y");
  EXPECT_EQ(base::ApiCode(ParseUseSkillRequest(R"({"skill": 7})").status()), "INVALID_FIELD_TYPE");
  auto wrong_type = ParseUseSkillRequest(R"({"skill": "hello", "mount_workflows": "yes"})");
  EXPECT_EQ(base::ApiCode(wrong_type.status()), "INVALID_FIELD_TYPE");
  EXPECT_EQ(base::HttpStatusFor(wrong_type.status()), 400);
  EXPECT_EQ(
      base::ApiCode(ParseUseSkillRequest(R"({"skill": "hello", "digest": "md5:x"})").status()),
      "SKILL_DIGEST_INVALID");
  auto use = ParseUseSkillRequest(R"({"skill": "hello@1.0.0", "mount_workflows": true})");
  ASSERT_TRUE(use.ok());
  EXPECT_TRUE(use->mount_workflows);
  EXPECT_EQ(use->ref.version, "1.0.0");
}

// The skills `aevatar up` publishes: each validates, read from the tree.
TEST(BundledSkills, EveryBundledSkillValidates) {
  const std::filesystem::path root = std::filesystem::path(AEVATAR_SOURCE_DIR) / "skills";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (!entry.is_directory()) continue;
    auto bundle = ReadSkillDir(entry.path().string());
    ASSERT_TRUE(bundle.ok()) << entry.path() << ": " << bundle.status();
    auto skill = ValidateSkillBundle(*bundle);
    ASSERT_TRUE(skill.ok()) << entry.path() << ": " << skill.status();
    EXPECT_EQ(skill->name, entry.path().filename().string());  // folder name = skill name
    ++seen;
  }
  EXPECT_GE(seen, 2);
  auto sample = ReadSkillDir((root / "aevatar-codex-exec-workflow-sample").string());
  ASSERT_TRUE(sample.ok());
  auto skill = ValidateSkillBundle(*sample);
  ASSERT_TRUE(skill.ok());
  ASSERT_EQ(skill->workflows.size(), 2u);
  EXPECT_EQ(skill->workflows[0].workflow_id, "codex-exec-check");
  EXPECT_EQ(skill->workflows[1].workflow_id, "codex-exec-private-ssh-check");
}

// What `aevatar up` does at each start: publishes them, idempotently; a
// bundled skill edited without a new version is skipped, not a failed start.
TEST(BundledSkills, PublishedAtEveryStartOnceAndAnEditWithoutNewVersionIsSkipped) {
  auto store = OpenSqliteSkillStore(":memory:");
  ASSERT_TRUE(store.ok()) << store.status();
  const std::string root = std::string(AEVATAR_SOURCE_DIR) + "/skills";
  auto first = PublishBundledSkills(**store, root, 1000);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_GE(*first, 2);
  EXPECT_EQ(PublishBundledSkills(**store, root, 2000).value_or(-1), *first);  // a restart
  auto sample = (*store)->GetVersion("aevatar-codex-exec-workflow-sample", "1.0.0");
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_EQ(sample->publisher, kBundledPublisher);
  EXPECT_EQ(sample->published_at_ms, 1000);

  const std::filesystem::path edited =
      std::filesystem::temp_directory_path() / ("skills_edit_" + std::to_string(::getpid()));
  std::filesystem::remove_all(edited);
  std::filesystem::create_directories(edited);
  std::filesystem::copy(root + "/aevatar-code-execute-durable-check",
                        edited / "aevatar-code-execute-durable-check",
                        std::filesystem::copy_options::recursive);
  std::ofstream(edited / "aevatar-code-execute-durable-check/skill.yaml", std::ios::app)
      << "# edited\n";
  EXPECT_EQ(PublishBundledSkills(**store, edited.string(), 3000).value_or(-1), 0);
  EXPECT_EQ((*store)->ListVersions("aevatar-code-execute-durable-check")->size(), 1u);
  std::filesystem::remove_all(edited);
  EXPECT_TRUE(absl::IsNotFound(PublishBundledSkills(**store, edited.string(), 4000).status()));
}

}  // namespace
}  // namespace aevatar::orchestrator
