// The ManagedCredentialVault contract, on SQLite and PostgreSQL alike: the
// key is sealed at rest, bound to its user, replaced in place.
#include <memory>
#include <string>

#include "aevatar/codex/credential_vault.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "stores/store_backends.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kSecret[] = "PLANTED-agent-key-7c2d";

class CredentialVaultSuite : public ::testing::TestWithParam<TestBackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam()();
    if (IsSkipped()) return;
    ASSERT_NE(backend_, nullptr);
    vault_ = Open(key_);
    ASSERT_NE(vault_, nullptr);
  }
  std::unique_ptr<ManagedCredentialVault> Open(const std::string& key) {
    auto vault = backend_->backend().OpenCredentials(std::make_shared<VaultKeyring>(key));
    EXPECT_TRUE(vault.ok()) << vault.status();
    return vault.ok() ? std::move(*vault) : nullptr;
  }

  std::unique_ptr<TestBackend> backend_;
  std::string key_ = base::RandomBytes(32);
  std::unique_ptr<ManagedCredentialVault> vault_;
};

AEVATAR_STORE_SUITE_ON_BOTH_BACKENDS(CredentialVaultSuite);

TEST_P(CredentialVaultSuite, StoresReplacesAndLoadsTheKeySealedAtRest) {
  EXPECT_FALSE(vault_->Load("user-1")->has_value());
  ASSERT_TRUE(vault_->Store("user-1", {"key_1", "us_route_1", kSecret, 10, 10}).ok());
  ASSERT_TRUE(vault_->Store("user-1", {"key_2", "us_route_2", kSecret, 20, 30}).ok());
  std::unique_ptr<ManagedCredentialVault> reopened = Open(key_);  // a restart or a replica
  auto loaded = reopened->Load("user-1");
  ASSERT_TRUE(loaded.ok() && loaded->has_value()) << loaded.status();
  EXPECT_EQ((*loaded)->key_id, "key_2");
  EXPECT_EQ((*loaded)->chrono_route_id, "us_route_2");
  EXPECT_EQ((*loaded)->secret, kSecret);
  EXPECT_EQ((*loaded)->created_at_ms, 10);  // kept from the first store
  EXPECT_EQ((*loaded)->updated_at_ms, 30);
  EXPECT_FALSE(reopened->Load("user-2")->has_value());
  const std::string bytes = backend_->RawBytes();
  EXPECT_NE(bytes.find("key_2"), std::string::npos);  // the dump holds the row
  EXPECT_EQ(bytes.find("PLANTED-agent-key"), std::string::npos);
}

TEST_P(CredentialVaultSuite, AnotherVaultKeyOpensNothing) {
  ASSERT_TRUE(vault_->Store("user-1", {"key_1", "us_route_1", kSecret, 10, 10}).ok());
  std::unique_ptr<ManagedCredentialVault> wrong = Open(base::RandomBytes(32));
  EXPECT_TRUE(absl::IsDataLoss(wrong->Load("user-1").status()));
}

}  // namespace
}  // namespace aevatar::orchestrator
