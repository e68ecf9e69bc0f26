// The skill registry through the three real binaries: aevatar publishes the
// bundled skills at start; a user publishes, lists and shows a skill (its
// versions immutable), mounts its workflows with use_skill (admitted as a
// save is), reads the mount's state and runs the mounted workflow; a pinned
// digest that differs is refused. The CLI does the same round trip.
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "aevatar/skills/skill_store.h"
#include "aevatar_stack.h"
#include "base/api_error.h"
#include "gtest/gtest.h"
#include "store/sqlite_db.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kSkillUsers[] = R"yaml(
users:
  - {username: alice, password: pw-alice}
  - {username: bob, password: pw-bob}
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
  - {owner: {user: bob}, catalog_service_id: chrono-sandbox}
)yaml";

constexpr char kHelloWorkflow[] = R"(workflow_id: skill-hello
inputs:
  - name: who
    type: string
    default: world
steps:
  - id: hello
    tool: code_execute
    arguments:
      language: bash
      source: echo "SKILL_HELLO ${inputs.who}"
    expect:
      trimmed_output_equals: SKILL_HELLO skills
)";

json HelloSkill(const std::string& version, const std::string& description = "says hello") {
  return {{"skill_yaml",
           "name: hello-skill\nversion: " + version + "\ndescription: " + description + "\n"},
          {"assets", {{"skill-hello.yaml", kHelloWorkflow}}}};
}

class AevatarSkills : public ::testing::Test {
 protected:
  void SetUp() override {
    stack_ = std::make_unique<AevatarStack>(
        kSkillUsers, std::vector<std::string>{},
        std::vector<std::string>{"--bundled-skills-dir", AEVATAR_SOURCE_DIR "/skills"});
    ASSERT_TRUE(stack_->ok());
    alice_ = stack_->Login("alice");
    bob_ = stack_->Login("bob");
    ASSERT_FALSE(alice_.empty());
    ASSERT_FALSE(bob_.empty());
  }
  http::ClientResponse Call(const std::string& method, const std::string& path,
                            const json& body = nullptr, const std::string& who = "") {
    return stack_->Aevatar(method, path, who.empty() ? alice_ : who,
                           body.is_null() ? "" : body.dump());
  }
  // Polls until `done(value)` or about `seconds` pass; returns the last value.
  json PollUntil(const std::string& path, const std::function<bool(const json&)>& done,
                 int seconds = 120) {
    json value;
    for (int i = 0; i < seconds * 5; ++i) {
      value = JsonOf(Call("GET", path));
      if (done(value)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return value;
  }
  // Mounts `skill` for alice and returns the mount once it is no longer mounting.
  json Mount(const json& use) {
    auto r = Call("POST", "/api/skills/use", use);
    EXPECT_EQ(r.status, 202) << r.body;
    const json accepted = JsonOf(r);
    return PollUntil(accepted.value("status_url", "/none"),
                     [](const json& m) { return m.value("done", false); });
  }
  json RunSaved(const std::string& workflow_id, const json& inputs) {
    auto r = Call("POST", "/api/workflow-runs", {{"workflow_id", workflow_id}, {"inputs", inputs}});
    EXPECT_EQ(r.status, 202) << r.body;
    return PollUntil("/api/workflow-runs/" + JsonOf(r).value("run_id", "none"),
                     [](const json& run) { return run.value("done", false); });
  }

  std::unique_ptr<AevatarStack> stack_;
  std::string alice_, bob_;
};

TEST_F(AevatarSkills, PublishListUseMountAndRunTheMountedWorkflow) {
  // aevatar published the bundled skills as it started.
  json listed = JsonOf(Call("GET", "/api/skills"));
  std::set<std::string> names;
  for (const json& s : listed.value("skills", json::array())) names.insert(s.value("name", ""));
  EXPECT_TRUE(names.count("aevatar-codex-exec-workflow-sample")) << listed.dump();
  EXPECT_TRUE(names.count("aevatar-code-execute-durable-check")) << listed.dump();

  auto published = Call("POST", "/api/skills", HelloSkill("1.0.0"));
  ASSERT_EQ(published.status, 201) << published.body;
  const std::string digest = JsonOf(published).value("digest", "");
  ASSERT_EQ(digest.rfind("sha256:", 0), 0u);
  auto again = Call("POST", "/api/skills", HelloSkill("1.0.0"));
  EXPECT_EQ(again.status, 200) << again.body;  // same content: idempotent
  EXPECT_FALSE(JsonOf(again).value("created", true));
  EXPECT_EQ(JsonOf(again).value("digest", ""), digest);

  const json shown = JsonOf(Call("GET", "/api/skills/hello-skill/versions/1.0.0"));
  EXPECT_EQ(shown.value("digest", ""), digest);
  EXPECT_EQ(shown["assets"].value("skill-hello.yaml", ""), kHelloWorkflow);
  EXPECT_EQ(shown["workflows"][0].value("workflow_id", ""), "skill-hello");
  EXPECT_EQ(shown.value("publisher", ""), "you");
  EXPECT_EQ(JsonOf(Call("GET", "/api/skills/hello-skill", nullptr, bob_)).value("latest", ""),
            "1.0.0");

  // use_skill with mount_workflows, pinned to the digest it was published with.
  const json mount =
      Mount({{"skill", "hello-skill@1.0.0"}, {"mount_workflows", true}, {"digest", digest}});
  ASSERT_EQ(mount.value("state", ""), "mounted") << mount.dump();
  EXPECT_EQ(mount["workflows"][0].value("workflow_id", ""), "skill-hello");
  EXPECT_EQ(mount["workflows"][0].value("state", ""), "mounted");
  // The mount is the caller's: another user does not see it.
  auto foreign = Call("GET", mount.value("status_url", "/none"), nullptr, bob_);
  EXPECT_EQ(foreign.status, 404);
  EXPECT_EQ(JsonOf(foreign).value("code", ""), "SKILL_MOUNT_NOT_FOUND");

  const json run = RunSaved("skill-hello", {{"who", "skills"}});
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  EXPECT_EQ(run["steps"][0]["output"].value("stdout", ""), "SKILL_HELLO skills\n");
  // Bob has not mounted it: it is not his saved workflow.
  auto bobs = stack_->Aevatar("POST", "/api/workflow-runs", bob_,
                              json{{"workflow_id", "skill-hello"}}.dump());
  EXPECT_EQ(bobs.status, 404) << bobs.body;
}

TEST_F(AevatarSkills, VersionsAreImmutableAndPinsRefuseAnotherDigest) {
  ASSERT_EQ(Call("POST", "/api/skills", HelloSkill("1.0.0")).status, 201);
  auto changed = Call("POST", "/api/skills", HelloSkill("1.0.0", "says hello, changed"));
  EXPECT_EQ(changed.status, 409) << changed.body;
  EXPECT_EQ(JsonOf(changed).value("code", ""), "SKILL_VERSION_IMMUTABLE");
  EXPECT_FALSE(JsonOf(changed).value("diagnostic_id", "").empty());
  auto newer = Call("POST", "/api/skills", HelloSkill("1.1.0", "says hello, changed"));
  ASSERT_EQ(newer.status, 201) << newer.body;
  // Another user may not publish under alice's name.
  auto squat = Call("POST", "/api/skills", HelloSkill("9.0.0"), bob_);
  EXPECT_EQ(squat.status, 403) << squat.body;
  EXPECT_EQ(JsonOf(squat).value("code", ""), "SKILL_NAME_OWNED");
  // Names starting aevatar- are the bundled skills', published or not yet.
  json reserved = HelloSkill("1.0.0");
  reserved["skill_yaml"] = "name: aevatar-next-sample\nversion: 1.0.0\ndescription: mine\n";
  auto claimed = Call("POST", "/api/skills", reserved, bob_);
  EXPECT_EQ(claimed.status, 403) << claimed.body;
  EXPECT_EQ(JsonOf(claimed).value("code", ""), "SKILL_NAME_RESERVED");
  EXPECT_EQ(Call("GET", "/api/skills/aevatar-next-sample").status, 404);

  // NAME alone is the latest release; a pin of another digest is refused.
  const json latest = JsonOf(Call("POST", "/api/skills/use", {{"skill", "hello-skill"}}));
  EXPECT_EQ(latest.value("version", ""), "1.1.0");
  EXPECT_FALSE(latest.value("mounted", true));
  const std::string old_digest =
      JsonOf(Call("GET", "/api/skills/hello-skill/versions/1.0.0")).value("digest", "");
  auto pinned =
      Call("POST", "/api/skills/use",
           {{"skill", "hello-skill@1.1.0"}, {"mount_workflows", true}, {"digest", old_digest}});
  EXPECT_EQ(pinned.status, 409) << pinned.body;
  EXPECT_EQ(JsonOf(pinned).value("code", ""), "SKILL_DIGEST_MISMATCH");

  struct Bad {
    json body;
    int status;
    const char* code;
  };
  for (const Bad& bad : std::vector<Bad>{
           {{{"skill", "no-such-skill"}}, 404, "SKILL_NOT_FOUND"},
           {{{"skill", "hello-skill@2.0.0"}}, 404, "SKILL_NOT_FOUND"},
           {{{"skill", "hello-skill@2.0"}}, 400, "SKILL_VERSION_INVALID"},
           {{{"skill", 12}}, 400, "INVALID_FIELD_TYPE"},
           {{{"skill", "hello-skill"}, {"mount_workflows", "yes"}}, 400, "INVALID_FIELD_TYPE"},
           {{{"skill", "hello-skill"}, {"digest", "sha1:abc"}}, 400, "SKILL_DIGEST_INVALID"},
       }) {
    auto r = Call("POST", "/api/skills/use", bad.body);
    EXPECT_EQ(r.status, bad.status) << bad.body.dump() << " " << r.body;
    EXPECT_EQ(JsonOf(r).value("code", ""), bad.code) << bad.body.dump();
  }
  auto bad_semver = Call("POST", "/api/skills", HelloSkill("v1.0.0"));
  EXPECT_EQ(bad_semver.status, 400) << bad_semver.body;
  EXPECT_EQ(JsonOf(bad_semver).value("code", ""), "SKILL_VERSION_INVALID");
  auto wrong_type = Call("POST", "/api/skills", {{"skill_yaml", 1}, {"assets", json::object()}});
  EXPECT_EQ(wrong_type.status, 400);
  EXPECT_EQ(JsonOf(wrong_type).value("code", ""), "INVALID_FIELD_TYPE");
}

// The durable code_execute canary, run from the mounted bundled skill.
// A skill's workflow with `triggers:` is refused at publish; a version stored
// before that rule (put in the store directly here) is refused at use as no
// longer valid, naming the rule, and is not called corrupt.
TEST_F(AevatarSkills, TriggersInASkillAreRefusedAtPublishAndAtUse) {
  const std::string triggered = std::string(kHelloWorkflow) + "triggers:\n  - cron: '* * * * *'\n";
  json bundle = HelloSkill("1.0.0");
  bundle["assets"]["skill-hello.yaml"] = triggered;
  auto published = Call("POST", "/api/skills", bundle, bob_);
  EXPECT_EQ(published.status, 400) << published.body;
  EXPECT_EQ(JsonOf(published).value("code", ""), "SKILL_TRIGGERS_FORBIDDEN");

  auto store = orchestrator::OpenSqliteSkillStore(stack_->dir() + "/aevatar/skills.db");
  ASSERT_TRUE(store.ok()) << store.status();
  orchestrator::SkillVersion old;
  old.name = "old-scheduled";
  old.version = "1.0.0";
  old.description = "published before skills could not carry triggers";
  old.bundle.manifest_yaml = "name: old-scheduled\nversion: 1.0.0\ndescription: old\n";
  old.bundle.assets["skill-hello.yaml"] = triggered;
  old.digest = orchestrator::SkillDigest(old.bundle);
  old.publisher = "bob-user-id";
  old.published_at_ms = 1000;
  ASSERT_TRUE((*store)->Publish(old).ok());
  auto used =
      Call("POST", "/api/skills/use", {{"skill", "old-scheduled"}, {"mount_workflows", true}});
  EXPECT_EQ(used.status, 409) << used.body;
  EXPECT_EQ(JsonOf(used).value("code", ""), "SKILL_NO_LONGER_VALID");
  EXPECT_NE(JsonOf(used).value("detail", "").find("SKILL_TRIGGERS_FORBIDDEN"), std::string::npos)
      << used.body;
  // Nothing was mounted: alice has no such workflow and no trigger.
  EXPECT_EQ(Call("GET", "/api/workflows/skill-hello/triggers").status, 404);
}

// The store refuses to record a mount's end state (a trigger planted in
// the SQLite file fails the write): the caller gets the store's 5xx, never a
// 202 "done" for a mount a poller would read as `mounting` forever.
TEST_F(AevatarSkills, AMountWhoseEndStateIsNotRecordedIsAnError) {
  ASSERT_EQ(Call("POST", "/api/skills", HelloSkill("1.0.0")).status, 201);
  auto db = store::Database::Open(stack_->dir() + "/aevatar/skills.db");
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE(db->Exec("CREATE TRIGGER refuse_mount_end BEFORE INSERT ON skill_mounts "
                       "WHEN NEW.state <> 'mounting' BEGIN SELECT RAISE(ABORT, 'planted'); END")
                  .ok());
  auto used =
      Call("POST", "/api/skills/use", {{"skill", "hello-skill@1.0.0"}, {"mount_workflows", true}});
  EXPECT_EQ(used.status, 500) << used.body;
  EXPECT_EQ(JsonOf(used).value("code", ""), "SKILL_MOUNT_NOT_RECORDED") << used.body;
  EXPECT_FALSE(JsonOf(used).value("diagnostic_id", "").empty()) << used.body;
}

TEST_F(AevatarSkills, TheBundledDurableCheckRunsFromItsMountedSkill) {
  const json mount =
      Mount({{"skill", "aevatar-code-execute-durable-check"}, {"mount_workflows", true}});
  ASSERT_EQ(mount.value("state", ""), "mounted") << mount.dump();
  EXPECT_EQ(mount.value("version", ""), "1.0.0");
  const json run = RunSaved("code-execute-durable-check", {{"seconds", 2}});
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  EXPECT_EQ(run["steps"][0]["output"].value("stdout", ""), "AEVATAR_DURABLE_GT125_OK\n");
}

// `aevatar skill publish | list | show | use --mount-workflows` against the stack.
TEST_F(AevatarSkills, TheCliPublishesShowsAndMounts) {
  const std::string dir = stack_->dir() + "/cli-skill";
  std::filesystem::create_directories(dir + "/assets");
  std::ofstream(dir + "/skill.yaml")
      << "name: cli-skill\nversion: 0.1.0\ndescription: from the CLI\n";
  std::ofstream(dir + "/assets/skill-hello.yaml") << kHelloWorkflow;
  std::ofstream(dir + "/README.md") << "documentation, not published\n";
  const std::string cli = "XDG_CONFIG_HOME='" + stack_->dir() + "/cli' AEVATAR_URL='" +
                          stack_->aevatar().base_url() + "' AEVATAR_TOKEN='" + alice_ + "' " +
                          BinaryPath("aevatar") + " skill ";
  ShellRun publish = RunShell(stack_->dir(), cli + "publish '" + dir + "'");
  ASSERT_EQ(publish.exit_code, 0) << publish.out << publish.err;
  EXPECT_NE(publish.out.find("published cli-skill@0.1.0 (sha256:"), std::string::npos)
      << publish.out;
  ShellRun list = RunShell(stack_->dir(), cli + "list --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("\"cli-skill\""), std::string::npos) << list.out;
  ShellRun text_list = RunShell(stack_->dir(), cli + "list");
  ASSERT_EQ(text_list.exit_code, 0) << text_list.err;
  EXPECT_NE(text_list.out.find("cli-skill@0.1.0  from the CLI"), std::string::npos)
      << text_list.out;
  EXPECT_NE(text_list.out.find("aevatar-codex-exec-workflow-sample@1.0.0"), std::string::npos)
      << text_list.out;
  ShellRun show = RunShell(stack_->dir(), cli + "show cli-skill@0.1.0");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("workflow skill-hello (assets/skill-hello.yaml)"), std::string::npos)
      << show.out;
  ShellRun use = RunShell(stack_->dir(), cli + "use cli-skill --mount-workflows --json");
  ASSERT_EQ(use.exit_code, 0) << use.out << use.err;
  const json mount = json::parse(use.out, nullptr, false);
  EXPECT_EQ(mount.value("state", ""), "mounted") << use.out;
  ShellRun refused =
      RunShell(stack_->dir(), cli + "use cli-skill@0.1.0 --digest sha256:" + std::string(64, '0'));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("SKILL_DIGEST_MISMATCH"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace aevatar::testing
