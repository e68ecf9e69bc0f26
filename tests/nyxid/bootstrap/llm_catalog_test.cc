// Catalog services of kind llm: the bootstrap fields, the provider key files,
// and the store keeping the key sealed at rest (schema v2).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/crypto.h"
#include "gtest/gtest.h"
#include "nyxid/bootstrap/bootstrap.h"
#include "service_process.h"  // testing::TempDir
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace aevatar::nyxid {
namespace {

constexpr char kLlmYaml[] = R"yaml(
users:
  - {username: alice, password: alice-pass}
catalog:
  - id: cat_chrono_llm_public
    slug: chrono-llm-public
    kind: llm
    base_url: http://127.0.0.1:9/v1
    provider_api_key_file: keys/provider.key
    model_allowlist: [gpt-a, gpt-b]
    auto_connect: true
)yaml";

std::string Catalog(const std::string& fields) {
  return "catalog:\n  - {id: c, slug: llm, " + fields + "}\n";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class LlmCatalog : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.path() + "/keys");
    provider_key_ = "sk-PLANTED-unit-" + base::RandomId("");
    WriteKey(provider_key_ + "\n");
  }
  void WriteKey(const std::string& text) {
    std::ofstream(dir_.path() + "/keys/provider.key", std::ios::binary) << text;
  }
  BootstrapSpec LoadedSpec() {
    auto spec = ParseBootstrap(kLlmYaml);
    EXPECT_TRUE(spec.ok()) << spec.status();
    EXPECT_TRUE(LoadProviderKeys(*spec, dir_.path()).ok());
    return *spec;
  }

  testing::TempDir dir_;
  std::string provider_key_;
};

TEST_F(LlmCatalog, ParsesTheLlmFields) {
  auto spec = ParseBootstrap(kLlmYaml);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->catalog.size(), 1u);
  const CatalogService& llm = spec->catalog[0];
  EXPECT_EQ(llm.kind, ServiceKind::kLlm);
  EXPECT_EQ(ServiceKindName(llm.kind), "llm");
  EXPECT_EQ(llm.base_url, "http://127.0.0.1:9/v1");
  EXPECT_EQ(llm.model_allowlist, (std::vector<std::string>{"gpt-a", "gpt-b"}));
  EXPECT_TRUE(llm.auto_connect);
  EXPECT_FALSE(llm.default_policy.forward_access_token);
  EXPECT_FALSE(llm.default_policy.inject_delegation_token);
  EXPECT_TRUE(llm.provider_api_key.empty());  // read by LoadProviderKeys, not the parser
  EXPECT_EQ(spec->provider_api_key_files.at("cat_chrono_llm_public"), "keys/provider.key");

  auto no_models =
      ParseBootstrap(Catalog("kind: llm, base_url: 'http://h/v1', provider_api_key_file: /k"));
  ASSERT_TRUE(no_models.ok()) << no_models.status();
  EXPECT_TRUE(no_models->catalog[0].model_allowlist.empty());  // every model refused
}

TEST_F(LlmCatalog, AcceptsHttpsBaseUrlsForLlmAndHttpServices) {
  for (const std::string& fields : {
           std::string("kind: llm, base_url: 'https://provider.example/v1', "
                       "provider_api_key_file: /k"),
           std::string("kind: http, base_url: 'https://service.example'"),
       }) {
    auto spec = ParseBootstrap(Catalog(fields));
    ASSERT_TRUE(spec.ok()) << fields << ": " << spec.status();
    EXPECT_EQ(spec->catalog[0].base_url.rfind("https://", 0), 0u) << fields;
  }
}

TEST_F(LlmCatalog, RejectsIncompleteOrMisplacedLlmFields) {
  for (const std::string& fields : {
           std::string("kind: llm, base_url: 'http://h/v1'"),  // no key file
           std::string("kind: llm, base_url: 'ftp://h/v1', provider_api_key_file: /k"),
           std::string("kind: llm, provider_api_key_file: /k"),  // no base_url
           std::string("kind: llm, base_url: 'http://h', provider_api_key_file: /k, "
                       "model_allowlist: gpt-a"),
           std::string("kind: llm, base_url: 'http://h', provider_api_key_file: /k, "
                       "model_allowlist: ['']"),
           std::string("kind: llm, base_url: 'http://h', provider_api_key_file: /k, "
                       "model_allowlist: [{a: b}]"),
           std::string("kind: llm, base_url: 'http://h', provider_api_key_file: /k, "
                       "forward_access_token: true"),
           std::string("kind: llm, base_url: 'http://h', provider_api_key_file: /k, "
                       "inject_delegation_token: true"),
           std::string("base_url: 'http://h', provider_api_key_file: /k"),  // kind http
           std::string("base_url: 'http://h', model_allowlist: [gpt-a]"),
           std::string("kind: gpt, base_url: 'http://h'"),
       }) {
    EXPECT_FALSE(ParseBootstrap(Catalog(fields)).ok()) << fields;
  }
}

TEST_F(LlmCatalog, ProviderKeysAreReadRelativeToTheBootstrapFileAndTrimmed) {
  BootstrapSpec spec = LoadedSpec();
  EXPECT_EQ(spec.catalog[0].provider_api_key, provider_key_);

  for (const std::string& bad : {std::string(""), std::string(" \n"), "two words " + provider_key_,
                                 std::string(5000, 'k'), "tab\t" + provider_key_}) {
    WriteKey(bad);
    auto again = ParseBootstrap(kLlmYaml);
    ASSERT_TRUE(again.ok());
    absl::Status st = LoadProviderKeys(*again, dir_.path());
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
    EXPECT_EQ(std::string(st.message()).find(provider_key_), std::string::npos);
  }
  auto missing = ParseBootstrap(kLlmYaml);
  EXPECT_TRUE(absl::IsInvalidArgument(LoadProviderKeys(*missing, dir_.path() + "/elsewhere")));
}

TEST_F(LlmCatalog, ApplyingWithoutTheKeyIsRefused) {
  auto spec = ParseBootstrap(kLlmYaml);
  ASSERT_TRUE(spec.ok());
  auto store = OpenSqliteNyxidStore(":memory:", base::RandomBytes(32));
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(ApplyBootstrap(*spec, **store, 1000)));
}

TEST_F(LlmCatalog, TheStoreKeepsTheProviderKeySealedAtRest) {
  const std::string db_path = dir_.path() + "/nyxid.db";
  const std::string at_rest_key = base::RandomBytes(32);
  {
    auto store = OpenSqliteNyxidStore(db_path, at_rest_key);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE(ApplyBootstrap(LoadedSpec(), **store, 1000).ok());
    auto found = (*store)->FindCatalogService("cat_chrono_llm_public");
    ASSERT_TRUE(found.ok()) << found.status();
    EXPECT_EQ(found->provider_api_key, provider_key_);
    EXPECT_EQ(found->model_allowlist, (std::vector<std::string>{"gpt-a", "gpt-b"}));
    auto listed = (*store)->ListCatalog();
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_EQ((*listed)[0].provider_api_key, provider_key_);
    // The auto-connected route exists for alice.
    auto routes = (*store)->ListAutoConnected("cat_chrono_llm_public");
    ASSERT_TRUE(routes.ok());
    EXPECT_EQ(routes->size(), 1u);
  }
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    if (!entry.is_regular_file() || entry.path().filename().string().rfind("nyxid.db", 0) != 0) {
      continue;
    }
    ++files;
    EXPECT_EQ(ReadAll(entry.path()).find(provider_key_), std::string::npos) << entry.path();
  }
  EXPECT_GE(files, 1);
  // Another at-rest key cannot open it.
  auto other = OpenSqliteNyxidStore(db_path, base::RandomBytes(32));
  ASSERT_TRUE(other.ok());
  auto found = (*other)->FindCatalogService("cat_chrono_llm_public");
  EXPECT_TRUE(absl::IsDataLoss(found.status())) << found.status();
  EXPECT_TRUE(absl::IsInvalidArgument(OpenSqliteNyxidStore(db_path, "short").status()));
}

TEST_F(LlmCatalog, AVersionOneCatalogMigratesWithoutKeyOrModels) {
  const std::string db_path = dir_.path() + "/v1.db";
  {
    auto db = store::Database::Open(db_path);
    ASSERT_TRUE(db.ok());
    // The v1 shape of the tables later migrations change (catalog_services
    // with one row; users, which migration 3 extends), and the other tables
    // migration 6 puts triggers on, bare.
    ASSERT_TRUE(db->Exec("CREATE TABLE users (id TEXT PRIMARY KEY, username TEXT NOT NULL UNIQUE, "
                         "password_hash TEXT NOT NULL, platform_admin INTEGER NOT NULL DEFAULT 0, "
                         "created_at_ms INTEGER NOT NULL);"
                         "CREATE TABLE catalog_services (id TEXT PRIMARY KEY, slug TEXT NOT NULL "
                         "UNIQUE, name TEXT NOT NULL, kind TEXT NOT NULL, base_url TEXT NOT NULL, "
                         "forward_access_token INTEGER NOT NULL, inject_delegation_token INTEGER "
                         "NOT NULL, delegation_token_scope TEXT NOT NULL, auto_connect INTEGER NOT "
                         "NULL);"
                         "CREATE TABLE orgs (id TEXT PRIMARY KEY);"
                         "CREATE TABLE memberships (org_id TEXT, user_id TEXT);"
                         "CREATE TABLE user_services (id TEXT PRIMARY KEY);"
                         "CREATE TABLE agent_keys (id TEXT PRIMARY KEY);"
                         "INSERT INTO catalog_services VALUES ('cat_chrono', 'chrono-sandbox', "
                         "'Chrono', 'http', 'http://127.0.0.1:9', 1, 1, 'proxy:*', 1);"
                         "PRAGMA user_version = 1;")
                    .ok());
  }
  auto store = OpenSqliteNyxidStore(db_path, base::RandomBytes(32));
  ASSERT_TRUE(store.ok()) << store.status();
  auto found = (*store)->FindCatalogService("cat_chrono");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->kind, ServiceKind::kHttp);
  EXPECT_EQ(found->base_url, "http://127.0.0.1:9");
  EXPECT_TRUE(found->provider_api_key.empty());
  EXPECT_TRUE(found->model_allowlist.empty());
  EXPECT_TRUE(found->delegation_audiences.empty());  // v5: no delegation token admitted
  EXPECT_FALSE(found->allow_link_local);
  auto db = store::Database::Open(db_path);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*store::SchemaVersion(*db), 6);  // every migration since v1 ran
}

}  // namespace
}  // namespace aevatar::nyxid
