// Upgrades from the previous schema: each fixture in tests/store/fixtures is a
// database as the previous release of one store wrote it (SQL text; see
// fixtures/README.md). Opening it with the current store runs the migrations;
// every accepted operation, run, event, callback and sealed value is still
// there, read through the store's public interface with its fields intact,
// and the migrated schema is exactly the schema of a new database.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "aevatar/approvals/approval_store.h"
#include "aevatar/audit/audit_log.h"
#include "aevatar/audit/audit_record.h"
#include "aevatar/audit/sqlite_audit_log.h"
#include "aevatar/codex/credential_vault.h"
#include "aevatar/runtime/workflow_store.h"
#include "aevatar/skills/skill_bundle.h"
#include "aevatar/skills/skill_store.h"
#include "aevatar/vault/vault_keyring.h"
#include "chrono/sqlite_operation_store.h"
#include "gtest/gtest.h"
#include "nyxid/nodes/node_store.h"
#include "nyxid/store/nyxid_store.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace aevatar::store {
namespace {

namespace fs = std::filesystem;
using chrono::OperationStatus;

class MigrationFixtures : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "migration_fixtures.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes the fixture `name` into a new database file; returns its path.
  std::string Load(const std::string& name, int expected_version) {
    std::ifstream in(std::string(AEVATAR_SOURCE_DIR) + "/tests/store/fixtures/" + name);
    std::stringstream sql;
    sql << in.rdbuf();
    EXPECT_FALSE(sql.str().empty()) << name;
    const std::string path = (dir_ / (name + ".db")).string();
    absl::StatusOr<Database> db = Database::Open(path);
    EXPECT_TRUE(db.ok()) << db.status();
    absl::Status loaded = db->Exec(sql.str());
    EXPECT_TRUE(loaded.ok()) << loaded;
    EXPECT_EQ(SchemaVersion(*db).value_or(-1), expected_version) << name;
    return path;
  }

  std::string NewPath(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

std::string Repeat(const std::string& unit, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += unit;
  return out;
}

// Every table, index and trigger of the file at `path`, as SQLite keeps them.
std::string SchemaOf(const std::string& path) {
  absl::StatusOr<Database> db = Database::Open(path);
  EXPECT_TRUE(db.ok()) << db.status();
  absl::StatusOr<Statement> rows = db->Prepare(
      "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
      "ORDER BY type, name");
  EXPECT_TRUE(rows.ok()) << rows.status();
  std::string schema;
  while (rows->Step().value_or(false)) {
    schema += rows->ColumnText(0) + " " + rows->ColumnText(1) + ": " + rows->ColumnText(2) + "\n";
  }
  schema += "user_version " + std::to_string(SchemaVersion(*db).value_or(-1));
  return schema;
}

TEST_F(MigrationFixtures, ChronoOperationsInEveryStatusSurviveTheUpgrade) {
  const std::string path = Load("chrono_operations_v1.sql", 1);
  {
    auto store = chrono::OpenSqliteOperationStore(path);
    ASSERT_TRUE(store.ok()) << store.status();
    for (OperationStatus status :
         {OperationStatus::kQueued, OperationStatus::kRunning, OperationStatus::kSucceeded,
          OperationStatus::kFailed, OperationStatus::kCancelled,
          OperationStatus::kOutcomeUncertain}) {
      EXPECT_EQ((*store)->CountWithStatus(status).value_or(-1), 1)
          << chrono::OperationStatusName(status);
    }
    auto queued = (*store)->Get("op_fixture_queued");
    ASSERT_TRUE(queued.ok()) << queued.status();
    EXPECT_EQ(queued->owner, "user_alice");
    EXPECT_EQ(queued->status, OperationStatus::kQueued);
    EXPECT_EQ(queued->idempotency_key_hash, std::string(64, 'a'));
    EXPECT_EQ(queued->request, R"json({"language":"python","source":"print(1)"})json");
    EXPECT_EQ(queued->sealed_credentials, std::string("\x00\x11\x22\x33", 4));
    EXPECT_EQ(queued->created_at_ms, 1700000000000);
    EXPECT_EQ(queued->version, 1);

    auto running = (*store)->Get("op_fixture_running");
    ASSERT_TRUE(running.ok()) << running.status();
    EXPECT_EQ(running->status, OperationStatus::kRunning);
    EXPECT_TRUE(running->cancel_requested);
    EXPECT_EQ(running->claimed_by, "runner_00112233445566778899aabbccddeeff");
    EXPECT_EQ(running->started_at_ms, 1700000002000);

    auto succeeded = (*store)->Get("op_fixture_succeeded");
    ASSERT_TRUE(succeeded.ok()) << succeeded.status();
    EXPECT_EQ(succeeded->status, OperationStatus::kSucceeded);
    EXPECT_EQ(succeeded->result, R"({"exit_code":0,"stdout":"ok\n","stderr":"","verdict":"ok"})");
    EXPECT_EQ(succeeded->finished_at_ms, 1700000005000);
    EXPECT_EQ(succeeded->expires_at_ms, 1700086405000);
    EXPECT_TRUE(succeeded->request.empty());

    auto uncertain = (*store)->Get("op_fixture_uncertain");
    ASSERT_TRUE(uncertain.ok()) << uncertain.status();
    EXPECT_EQ(uncertain->status, OperationStatus::kOutcomeUncertain);
    EXPECT_EQ(uncertain->owner, "user_bob");

    // The upgraded store goes on working: the queued operation is claimed.
    auto claimed = (*store)->ClaimNext("runner_after_upgrade", 1700000100000,
                                       /*lease_ms=*/15000);
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    ASSERT_TRUE(claimed->has_value());
    EXPECT_EQ((*claimed)->id, "op_fixture_queued");
  }
  auto fresh = chrono::OpenSqliteOperationStore(NewPath("fresh_operations.db"));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(SchemaOf(path), SchemaOf(NewPath("fresh_operations.db")));
}

TEST_F(MigrationFixtures, AevatarWorkflowsRunsEventsAndSealedMaterialSurviveTheUpgrade) {
  const std::string path = Load("aevatar_workflows_v1.sql", 1);
  {
    auto store = orchestrator::OpenSqliteWorkflowStore(path);
    ASSERT_TRUE(store.ok()) << store.status();
    auto saved = (*store)->GetWorkflow("user_alice", "fixture-flow");
    ASSERT_TRUE(saved.ok()) << saved.status();
    EXPECT_EQ(saved->digest, std::string(64, 'd'));
    EXPECT_EQ(saved->definition["steps"][0]["tool"], "code_execute");
    EXPECT_EQ(saved->admission_proof["v"], 5);
    EXPECT_EQ(saved->saved_at_ms, 1700000000000);
    EXPECT_TRUE(saved->authorization_catalog.is_null()) << "saved before catalogs existed";

    auto done = (*store)->GetRun("run_fixture_done");
    ASSERT_TRUE(done.ok()) << done.status();
    EXPECT_EQ(done->owner, "user_alice");
    EXPECT_EQ(done->workflow_id, "fixture-flow");
    EXPECT_EQ(done->phase, "succeeded");
    EXPECT_EQ(done->version, 3);
    EXPECT_EQ(done->state["steps"][0]["output"]["stdout"], "hi\n");

    auto events = (*store)->EventsAfter("run_fixture_done", 0);
    ASSERT_TRUE(events.ok()) << events.status();
    ASSERT_EQ(events->size(), 3u);
    EXPECT_EQ((*events)[0].type, "run.started");
    EXPECT_EQ((*events)[1].data["operation_id"], "op_fixture_succeeded");
    EXPECT_EQ((*events)[2].type, "step.completed");

    auto live = (*store)->LiveRunsOf("user_alice");
    ASSERT_TRUE(live.ok()) << live.status();
    EXPECT_EQ(*live, std::vector<std::string>{"run_fixture_live"});
    auto callback = (*store)->CallbackOf("run_fixture_live");
    ASSERT_TRUE(callback.ok() && callback->has_value()) << callback.status();
    EXPECT_EQ((*callback)->callback_id, "cb_fixture_1");
    EXPECT_EQ((*callback)->due_at_ms, 1700000007000);

    std::string sealed(40, '\0');
    for (int i = 0; i < 40; ++i) sealed[i] = static_cast<char>(i);
    EXPECT_EQ((*store)->GetSealed("vault_fixture_source").value_or(""), sealed);

    auto recent = (*store)->RecentRunsOf("user_alice", 10);
    ASSERT_TRUE(recent.ok()) << recent.status();
    EXPECT_EQ(*recent, (std::vector<std::string>{"run_fixture_live", "run_fixture_done"}));
  }
  auto fresh = orchestrator::OpenSqliteWorkflowStore(NewPath("fresh_workflows.db"));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(SchemaOf(path), SchemaOf(NewPath("fresh_workflows.db")));
}

// The vault key make_fixtures.py sealed the approvals' calls and the managed
// credentials with (test only).
std::shared_ptr<const orchestrator::VaultKeyring> FixtureVaultKeyring() {
  return std::make_shared<const orchestrator::VaultKeyring>(std::string(32, '\x5a'));
}

TEST_F(MigrationFixtures, AevatarApprovalsInEveryStateSurviveTheTableRebuild) {
  const std::string path = Load("aevatar_approvals_v1.sql", 1);
  {
    auto store = orchestrator::OpenSqliteApprovalStore(path, FixtureVaultKeyring());
    ASSERT_TRUE(store.ok()) << store.status();
    auto all = (*store)->List("user_alice", 10);
    ASSERT_TRUE(all.ok()) << all.status();
    EXPECT_EQ(all->size(), 4u);
    struct Expected {
      const char* id;
      orchestrator::ApprovalState state;
      int n;
      int64_t decided_at_ms;
    };
    for (const Expected& e : {
             Expected{"appr_fixture_pending", orchestrator::ApprovalState::kPending, 1, 0},
             Expected{"appr_fixture_approved", orchestrator::ApprovalState::kApproved, 2,
                      1700000100000},
             Expected{"appr_fixture_denied", orchestrator::ApprovalState::kDenied, 3,
                      1700000200000},
             Expected{"appr_fixture_expired", orchestrator::ApprovalState::kExpired, 4, 0},
         }) {
      auto got = (*store)->Get("user_alice", e.id);
      ASSERT_TRUE(got.ok() && got->has_value()) << e.id << " " << got.status();
      const orchestrator::Approval& a = **got;
      EXPECT_EQ(a.state, e.state) << e.id;
      EXPECT_EQ(a.tool, "private_ssh");
      EXPECT_EQ(a.call["prompt"], "restart service " + std::to_string(e.n)) << "opens sealed";
      EXPECT_EQ(a.call_digest.substr(0, 7), "sha256:");
      EXPECT_EQ(a.created_at_ms, 1700000000000 + e.n * 1000);
      EXPECT_EQ(a.decided_at_ms, e.decided_at_ms);
    }
    // Version 2's state: the approved approval is used once.
    EXPECT_TRUE((*store)->Consume("user_alice", "appr_fixture_approved").value_or(false));
    EXPECT_FALSE((*store)->Consume("user_alice", "appr_fixture_approved").value_or(true));
  }
  auto fresh =
      orchestrator::OpenSqliteApprovalStore(NewPath("fresh_approvals.db"), FixtureVaultKeyring());
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(SchemaOf(path), SchemaOf(NewPath("fresh_approvals.db")));
}

TEST_F(MigrationFixtures, NyxidAccountsRoutesAndKeysSurviveTheUpgrade) {
  const std::string path = Load("nyxid_v4.sql", 4);
  {
    auto store = nyxid::OpenSqliteNyxidStore(path, std::string(32, 'k'));
    ASSERT_TRUE(store.ok()) << store.status();
    nyxid::NyxidStore& s = **store;
    auto alice = s.FindUserByName("alice");
    ASSERT_TRUE(alice.ok()) << alice.status();
    EXPECT_EQ(alice->id, "user_alice");
    EXPECT_EQ(alice->password_hash, "$argon2id$v=19$m=65536,t=2,p=1$fixturesalt$fixturehash");
    EXPECT_FALSE(alice->platform_admin);
    EXPECT_EQ(alice->tokens_not_before_ms, 1700000050000);
    EXPECT_TRUE(s.FindUserById("user_op").value_or(nyxid::User{}).platform_admin);
    EXPECT_EQ(s.ListUsers().value_or(std::vector<nyxid::User>{}).size(), 2u);

    auto org = s.FindOrgBySlug("lab");
    ASSERT_TRUE(org.ok()) << org.status();
    EXPECT_EQ(org->name, "The Lab");
    auto memberships = s.MembershipsOfUser("user_alice");
    ASSERT_TRUE(memberships.ok() && memberships->size() == 1u);
    EXPECT_EQ((*memberships)[0].role, nyxid::OrgRole::kAdmin);

    auto chrono = s.FindCatalogService("chrono-sandbox");
    ASSERT_TRUE(chrono.ok()) << chrono.status();
    EXPECT_EQ(chrono->kind, nyxid::ServiceKind::kHttp);
    EXPECT_EQ(chrono->base_url, "http://127.0.0.1:8081");
    EXPECT_TRUE(chrono->default_policy.inject_delegation_token);
    EXPECT_EQ(chrono->default_policy.delegation_token_scope,
              (std::vector<std::string>{"proxy:*", "sandbox:execute"}));
    // Version 5's columns take their defaults: no audience, no link-local.
    EXPECT_TRUE(chrono->delegation_audiences.empty());
    EXPECT_FALSE(chrono->allow_link_local);
    auto llm = s.FindCatalogService("chrono-llm-public");
    ASSERT_TRUE(llm.ok()) << llm.status();
    EXPECT_EQ(llm->kind, nyxid::ServiceKind::kLlm);
    EXPECT_EQ(llm->model_allowlist, (std::vector<std::string>{"model-a", "model-b"}));
    EXPECT_TRUE(llm->auto_connect);

    auto route = s.FindUserService("route_alice_chrono");
    ASSERT_TRUE(route.ok()) << route.status();
    EXPECT_EQ(route->slug, "chrono-sandbox");
    EXPECT_EQ(route->catalog_service_id.value_or(""), "chrono-sandbox");
    EXPECT_EQ(route->owner, (nyxid::Owner{nyxid::OwnerKind::kUser, "user_alice"}));
    EXPECT_TRUE(route->active);
    EXPECT_TRUE(route->policy.forward_access_token);
    auto custom = s.FindUserServiceBySlug({nyxid::OwnerKind::kOrg, "org_lab"}, "lab-api");
    ASSERT_TRUE(custom.ok()) << custom.status();
    EXPECT_FALSE(custom->catalog_service_id.has_value());
    EXPECT_FALSE(custom->active);
    EXPECT_TRUE(custom->credential_source_allowed);
    EXPECT_EQ(custom->base_url, "http://10.0.0.5:9000");
    EXPECT_EQ(custom->updated_at_ms, 1700000003000);

    auto key = s.FindAgentKeyByHash(Repeat("a1", 32));
    ASSERT_TRUE(key.ok()) << key.status();
    EXPECT_EQ(key->id, "key_live");
    EXPECT_EQ(key->key_prefix, "nyxid_ag_AbC");
    EXPECT_EQ(key->allowed_services, std::vector<std::string>{"route_alice_chrono"});
    EXPECT_FALSE(key->revoked_at_ms.has_value());
    auto keys = s.ListAgentKeys("user_alice");
    ASSERT_TRUE(keys.ok()) << keys.status();
    ASSERT_EQ(keys->size(), 2u);
    for (const nyxid::AgentKeyRecord& k : *keys) {
      if (k.id == "key_revoked") {
        EXPECT_EQ(k.revoked_at_ms.value_or(0), 1700000006000);
      }
    }

    EXPECT_EQ(s.FindClientBySecretHash(Repeat("c3", 32)).value_or(nyxid::RegisteredClient{}).name,
              "aevatar");
    auto audit = s.ListAdminAudit(0, 10);
    ASSERT_TRUE(audit.ok()) << audit.status();
    ASSERT_EQ(audit->size(), 2u);
    EXPECT_EQ((*audit)[0].action, "route.created");
    EXPECT_EQ((*audit)[1].detail, R"({"label":"old"})");
  }
  auto fresh = nyxid::OpenSqliteNyxidStore(NewPath("fresh_nyxid.db"), std::string(32, 'k'));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(SchemaOf(path), SchemaOf(NewPath("fresh_nyxid.db")));
}

TEST_F(MigrationFixtures, AevatarManagedCredentialsStillOpen) {
  const std::string path = Load("aevatar_codex_v1.sql", 1);
  {
    auto vault = orchestrator::OpenSqliteCredentialVault(path, FixtureVaultKeyring());
    ASSERT_TRUE(vault.ok()) << vault.status();
    auto alice = (*vault)->Load("user_alice");
    ASSERT_TRUE(alice.ok() && alice->has_value()) << alice.status();
    EXPECT_EQ((*alice)->secret, "nyxid_ag_fixture-alice-not-a-real-key");
    EXPECT_EQ((*alice)->key_id, "key_managed_1");
    EXPECT_EQ((*alice)->chrono_route_id, "route_user_alice");
    EXPECT_EQ((*alice)->created_at_ms, 1700000000001);
    EXPECT_EQ((*alice)->updated_at_ms, 1700000500001);
    auto bob = (*vault)->Load("user_bob");
    ASSERT_TRUE(bob.ok() && bob->has_value()) << bob.status();
    EXPECT_EQ((*bob)->secret, "nyxid_ag_fixture-bob-not-a-real-key");
  }
  auto fresh =
      orchestrator::OpenSqliteCredentialVault(NewPath("fresh_codex.db"), FixtureVaultKeyring());
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(SchemaOf(path), SchemaOf(NewPath("fresh_codex.db")));
}

TEST_F(MigrationFixtures, AevatarSkillsAndMountsStillRead) {
  const std::string path = Load("aevatar_skills_v1.sql", 1);
  {
    auto store = orchestrator::OpenSqliteSkillStore(path);
    ASSERT_TRUE(store.ok()) << store.status();
    auto skill = (*store)->GetVersion("fixture-skill", "1.0.0");
    ASSERT_TRUE(skill.ok()) << skill.status();
    EXPECT_EQ(skill->description, "a fixture");
    EXPECT_EQ(skill->publisher, "user_alice");
    EXPECT_EQ(skill->published_at_ms, 1700000000000);
    ASSERT_EQ(skill->bundle.assets.size(), 1u);
    // The digest the release wrote is the one this code computes from the bytes.
    EXPECT_EQ(orchestrator::SkillDigest(skill->bundle), skill->digest);
    auto validated = orchestrator::ValidateSkillBundle(skill->bundle);
    ASSERT_TRUE(validated.ok()) << validated.status();
    EXPECT_EQ(validated->workflows.at(0).workflow_id, "fixture-check");
    auto mount = (*store)->GetMount("mnt_fixture");
    ASSERT_TRUE(mount.ok()) << mount.status();
    EXPECT_EQ(mount->owner, "user_alice");
    EXPECT_EQ(mount->state, "mounted");
    EXPECT_EQ(mount->digest, skill->digest);
    EXPECT_EQ(mount->workflows.at(0).value("workflow_id", ""), "fixture-check");
    EXPECT_EQ(mount->diagnostic_id, "diag_fixture");
    EXPECT_EQ(mount->updated_at_ms, 1700000100001);
    // Its name still belongs to its first publisher.
    orchestrator::SkillVersion squat = *validated;
    squat.version = "2.0.0";
    squat.publisher = "user_bob";
    EXPECT_FALSE((*store)->Publish(squat).ok());
  }
  auto fresh = orchestrator::OpenSqliteSkillStore(NewPath("fresh_skills.db"));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(SchemaOf(path), SchemaOf(NewPath("fresh_skills.db")));
}

TEST_F(MigrationFixtures, NyxidNodesTokensAndSshTargetsSurvive) {
  const std::string path = Load("nyxid_nodes_v1.sql", 1);
  {
    auto store = nyxid::OpenSqliteNodeStore(path);
    ASSERT_TRUE(store.ok()) << store.status();
    auto node = (*store)->FindNode("node_fixture_laptop");
    ASSERT_TRUE(node.ok()) << node.status();
    EXPECT_EQ(node->user_id, "user_alice");
    EXPECT_EQ(node->name, "laptop");
    EXPECT_EQ(node->last_seen_ms, 1700000200000);
    EXPECT_EQ((*store)->FindNodeBySecretHash(Repeat("a6", 32)).value_or(nyxid::NodeRecord{}).id,
              "node_fixture_laptop");
    auto target = (*store)->FindSshTarget("route_alice_ssh");
    ASSERT_TRUE(target.ok()) << target.status();
    EXPECT_EQ(target->host, "10.0.0.7");
    EXPECT_EQ(target->port, 2222);
    EXPECT_EQ(target->principals, (std::vector<std::string>{"deploy", "ops"}));
    // The used token stays used; the unused one is redeemed once.
    EXPECT_FALSE((*store)->ConsumeToken(Repeat("e4", 32), 1700000300000).ok());
    auto token = (*store)->ConsumeToken(Repeat("f5", 32), 1700000300000);
    ASSERT_TRUE(token.ok()) << token.status();
    EXPECT_EQ(token->node_name, "desktop");
  }
  auto fresh = nyxid::OpenSqliteNodeStore(NewPath("fresh_nodes.db"));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(SchemaOf(path), SchemaOf(NewPath("fresh_nodes.db")));
}

TEST_F(MigrationFixtures, AevatarAuditRecordsKeepTheirContentHashes) {
  const std::string path = Load("aevatar_audit_v1.sql", 1);
  {
    auto log = orchestrator::OpenSqliteAuditLog(path);
    ASSERT_TRUE(log.ok()) << log.status();
    auto records = (*log)->ForRun("run_fixture_done");
    ASSERT_TRUE(records.ok()) << records.status();
    ASSERT_EQ(records->size(), 2u);
    EXPECT_EQ((*records)[0].record_id, "aud_fixture_1");
    EXPECT_EQ((*records)[0].kind, "tool.terminal");
    EXPECT_EQ((*records)[0].fact["outcome"], "succeeded");
    EXPECT_EQ((*records)[1].fact["operation_id"], "op_fixture_succeeded");
    EXPECT_EQ((*records)[1].trace.traceparent,
              "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203332-01");
    for (const orchestrator::AuditRecord& record : *records) {
      // Every business field read back is what the stored hash was made of.
      EXPECT_EQ(orchestrator::ContentHash(record), record.content_hash) << record.record_id;
    }
    // Replaying a stored record is recognised as the same record.
    EXPECT_EQ((*log)->Append((*records)[0]).value_or(orchestrator::AppendOutcome::kConflict),
              orchestrator::AppendOutcome::kDuplicate);
  }
  auto fresh = orchestrator::OpenSqliteAuditLog(NewPath("fresh_audit.db"));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(SchemaOf(path), SchemaOf(NewPath("fresh_audit.db")));
}

}  // namespace
}  // namespace aevatar::store
