// The vault keyring and the one sealed-JSON helper: what opens under which
// key before, during and after a rotation, and rows that do not belong.
#include "aevatar/vault/vault_keyring.h"

#include "aevatar/vault/sealed_json.h"
#include "base/crypto.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

TEST(VaultKeyring, DuringARotationBothKeysOpenAndOnlyTheNewOneSeals) {
  const std::string old_key = base::RandomBytes(32);
  const std::string new_key = base::RandomBytes(32);
  VaultKeyring keyring(old_key);
  const std::string before = keyring.Seal("before");
  EXPECT_FALSE(keyring.rotating());

  ASSERT_TRUE(keyring.BeginRotation(new_key).ok());
  EXPECT_TRUE(keyring.rotating());
  const std::string during = keyring.Seal("during");
  EXPECT_EQ(keyring.Open(before).value_or(""), "before");
  EXPECT_EQ(keyring.Open(during).value_or(""), "during");
  EXPECT_FALSE(keyring.OpensWithCurrent(before));
  EXPECT_TRUE(keyring.OpensWithCurrent(during));
  EXPECT_EQ(base::SecretBoxOpen(new_key, during).value_or(""), "during");
  EXPECT_FALSE(base::SecretBoxOpen(old_key, during).ok());

  keyring.Retire();
  EXPECT_FALSE(keyring.rotating());
  EXPECT_TRUE(absl::IsDataLoss(keyring.Open(before).status()));
  EXPECT_EQ(keyring.Open(during).value_or(""), "during");
}

TEST(VaultKeyring, ASecondRotationWaitsForTheFirstToRetireItsKey) {
  VaultKeyring keyring(base::RandomBytes(32));
  const std::string next = base::RandomBytes(32);
  ASSERT_TRUE(keyring.BeginRotation(next).ok());
  EXPECT_TRUE(keyring.BeginRotation(next).ok());  // the same rotation again
  EXPECT_TRUE(absl::IsFailedPrecondition(keyring.BeginRotation(base::RandomBytes(32))));
  keyring.Retire();
  EXPECT_TRUE(keyring.BeginRotation(base::RandomBytes(32)).ok());
}

TEST(SealedJson, AValueBoundToItsRowOpensOnlyThere) {
  VaultKeyring keyring(base::RandomBytes(32));
  const std::string sealed = SealJson(keyring, {{"owner", "alice"}, {"id", "a1"}, {"call", 7}});
  auto opened =
      OpenSealedJson(keyring, sealed, "approval call", {{"owner", "alice"}, {"id", "a1"}});
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ((*opened)["call"], 7);
  EXPECT_TRUE(absl::IsDataLoss(
      OpenSealedJson(keyring, sealed, "approval call", {{"owner", "bob"}, {"id", "a1"}}).status()));
  EXPECT_TRUE(absl::IsDataLoss(
      OpenSealedJson(keyring, sealed, "approval call", {{"missing", "x"}}).status()));
  // Not an object, and not sealed under this keyring.
  EXPECT_TRUE(absl::IsDataLoss(OpenSealedJson(keyring, keyring.Seal("[1]"), "x").status()));
  VaultKeyring other(base::RandomBytes(32));
  EXPECT_TRUE(absl::IsDataLoss(OpenSealedJson(other, sealed, "approval call").status()));
}

}  // namespace
}  // namespace aevatar::orchestrator
