// Credential kinds: Agent Keys, access and delegation tokens, signing keys,
// and the authenticator that tells them apart (fail closed).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/jws.h"
#include "gtest/gtest.h"
#include "nyxid/store/nyxid_store.h"
#include "nyxid/tokens/agent_keys.h"
#include "nyxid/tokens/authenticator.h"
#include "nyxid/tokens/signing_keys.h"
#include "nyxid/tokens/token_service.h"
#include "testing/temp_dir.h"

namespace aevatar::nyxid {
namespace {

using testing::TempDir;

std::string Raw(const nlohmann::json& header, const nlohmann::json& claims,
                const std::string& signature) {
  return base::Base64UrlEncode(header.dump()) + "." + base::Base64UrlEncode(claims.dump()) + "." +
         base::Base64UrlEncode(signature);
}

class CredentialKinds : public ::testing::Test {
 protected:
  void SetUp() override {
    auto keys = KeyRing::LoadOrCreate(dir_.path(), base::NowUnixSecs(), 3900);
    ASSERT_TRUE(keys.ok()) << keys.status();
    keys_ = std::move(*keys);
    tokens_ = std::make_unique<TokenService>(keys_.get(), "nyxid-unit", [this] { return now_; });
    auto store = OpenSqliteNyxidStore(dir_.path() + "/nyxid.db", base::RandomBytes(32));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    user_.id = "usr_alice";
    user_.username = "alice";
    user_.password_hash = "x";
    ASSERT_TRUE(store_->InsertUser(user_).ok());
    auth_ = std::make_unique<Authenticator>(store_.get(), tokens_.get());
  }

  std::string CodeOf(std::string_view bearer) {
    auto principal = auth_->AuthenticateBearer(bearer);
    return principal.ok() ? "OK" : base::ApiCode(principal.status());
  }

  TempDir dir_;
  int64_t now_ = base::NowUnixSecs();
  std::unique_ptr<KeyRing> keys_;
  std::unique_ptr<TokenService> tokens_;
  std::unique_ptr<NyxidStore> store_;
  std::unique_ptr<Authenticator> auth_;
  User user_;
};

TEST(AgentKeys, HaveThePrefixAnd32RandomBytesAndAreStoredAsHashes) {
  NewAgentKey key = GenerateAgentKey("usr_1", "ci", {}, 1);
  EXPECT_EQ(key.secret.rfind("nyxid_ag_", 0), 0u);
  auto random = base::Base64UrlDecode(key.secret.substr(9));
  ASSERT_TRUE(random.ok());
  EXPECT_EQ(random->size(), 32u);
  EXPECT_TRUE(LooksLikeAgentKey(key.secret));
  EXPECT_EQ(key.record.key_hash_hex, base::Sha256Hex(key.secret));
  EXPECT_EQ(key.record.key_hash_hex.find(key.secret), std::string::npos);
  EXPECT_NE(GenerateAgentKey("usr_1", "ci", {}, 1).secret, key.secret);
  EXPECT_FALSE(LooksLikeAgentKey("nyxid_ag_short"));
  EXPECT_FALSE(LooksLikeAgentKey(key.secret + "x"));
}

TEST(AgentKeys, AllowedServicesNameIdsOrSlugs) {
  UserService route;
  route.id = "us_1";
  route.slug = "chrono-sandbox";
  AgentKeyRecord key;
  EXPECT_TRUE(AgentKeyAllowsRoute(key, route));  // empty list: any usable route
  key.allowed_services = {"us_2"};
  EXPECT_FALSE(AgentKeyAllowsRoute(key, route));
  key.allowed_services = {"us_1"};
  EXPECT_TRUE(AgentKeyAllowsRoute(key, route));
  key.allowed_services = {"chrono-sandbox"};
  EXPECT_TRUE(AgentKeyAllowsRoute(key, route));
}

TEST_F(CredentialKinds, AccessTokenKeepsItsKind) {
  auto principal = auth_->AuthenticateBearer(tokens_->IssueAccess(user_.id, user_.username));
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->kind, CredentialKind::kAccess);
  EXPECT_EQ(principal->user.id, user_.id);
  EXPECT_TRUE(principal->HasScope("account:read"));
}

// A logout revokes every token dated before the millisecond after it; a
// login in that millisecond must still get a token that works.
TEST_F(CredentialKinds, ALoginInTheMillisecondAfterALogoutGetsAWorkingToken) {
  const std::string before = tokens_->IssueAccess(user_.id, user_.username);
  User revoked = user_;
  revoked.tokens_not_before_ms = base::NowUnixMs() + 1;  // as a logout sets it
  ASSERT_TRUE(store_->UpdateUser(revoked).ok());
  EXPECT_EQ(CodeOf(before), "TOKEN_REVOKED");
  EXPECT_EQ(CodeOf(tokens_->IssueAccess(user_.id, user_.username, revoked.tokens_not_before_ms)),
            "OK");
}

TEST_F(CredentialKinds, DelegationTokenHasTheFormatChronoVerifies) {
  std::string token =
      tokens_->MintDelegation(user_.id, "chrono-sandbox", {"sandbox:execute", "proxy:*"});
  auto verified =
      base::VerifyJws(token, [&](std::string_view kid) { return keys_->Lookup(kid, now_); });
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->header["alg"], "EdDSA");
  EXPECT_EQ(verified->header["typ"], "JWT");
  EXPECT_EQ(verified->header["kid"], keys_->current_kid());
  const auto& claims = verified->claims;
  EXPECT_EQ(claims["sub"], user_.id);
  EXPECT_EQ(claims["aud"], "chrono-sandbox");
  EXPECT_EQ(claims["scope"], "proxy:* sandbox:execute");
  EXPECT_EQ(claims["token_kind"], "delegation");
  EXPECT_EQ(claims["exp"].get<int64_t>() - claims["iat"].get<int64_t>(), 300);
  EXPECT_TRUE(claims["jti"].is_string());
  base::ClaimRequirements requirements;
  requirements.audience = "chrono-sandbox";
  requirements.token_kind = "delegation";
  requirements.required_scopes = {"sandbox:execute"};
  requirements.now_unix = now_;
  EXPECT_TRUE(base::VerifyClaims(claims, requirements).ok());

  auto principal = auth_->AuthenticateBearer(token);
  ASSERT_TRUE(principal.ok());
  EXPECT_EQ(principal->kind, CredentialKind::kDelegation);
}

TEST_F(CredentialKinds, ForgedAndStaleTokensAre401WithTypedCodes) {
  nlohmann::json claims = {{"iss", "nyxid-unit"},     {"sub", user_.id},        {"aud", "nyxid"},
                           {"scope", "account:read"}, {"token_kind", "access"}, {"iat", now_},
                           {"exp", now_ + 600}};
  // Signed by another key under our kid.
  base::Ed25519KeyPair other = base::GenerateEd25519KeyPair();
  EXPECT_EQ(CodeOf(base::SignJws(claims, keys_->current_kid(), other.secret_key)),
            "TOKEN_SIGNATURE_INVALID");
  // alg none and HS256.
  EXPECT_EQ(
      CodeOf(Raw({{"alg", "none"}, {"typ", "JWT"}, {"kid", keys_->current_kid()}}, claims, "")),
      "TOKEN_ALGORITHM_REJECTED");
  EXPECT_EQ(CodeOf(Raw({{"alg", "HS256"}, {"typ", "JWT"}, {"kid", keys_->current_kid()}}, claims,
                       std::string(32, 'a'))),
            "TOKEN_ALGORITHM_REJECTED");
  // Unknown kid.
  EXPECT_EQ(CodeOf(base::SignJws(claims, "nyx_unknown", other.secret_key)), "TOKEN_KEY_UNKNOWN");
  // Expired.
  std::string token = tokens_->IssueAccess(user_.id, user_.username);
  now_ += kAccessTokenTtlSecs + 120;
  EXPECT_EQ(CodeOf(token), "TOKEN_EXPIRED");
  // Another issuer's token, signed with our key.
  now_ = base::NowUnixSecs();
  TokenService foreign(keys_.get(), "someone-else", [this] { return now_; });
  EXPECT_EQ(CodeOf(foreign.IssueAccess(user_.id, user_.username)), "TOKEN_ISSUER_MISMATCH");
  // Garbage.
  EXPECT_EQ(CodeOf("not-a-token"), "TOKEN_MALFORMED");
}

TEST_F(CredentialKinds, AgentKeysAreVerifiedByHashAndRevocable) {
  NewAgentKey key = GenerateAgentKey(user_.id, "ci", {}, 1);
  ASSERT_TRUE(store_->InsertAgentKey(key.record).ok());
  auto principal = auth_->AuthenticateBearer(key.secret);
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->kind, CredentialKind::kAgentKey);
  EXPECT_EQ(CredentialKindName(principal->kind), "AgentKey");
  EXPECT_EQ(CodeOf(GenerateAgentKey(user_.id, "x", {}, 1).secret), "AGENT_KEY_INVALID");
  ASSERT_TRUE(store_->RevokeAgentKey(user_.id, key.record.id, 2).ok());
  auto revoked = auth_->AuthenticateBearer(key.secret);
  EXPECT_EQ(base::ApiCode(revoked.status()), "AGENT_KEY_REVOKED");
  EXPECT_EQ(base::HttpStatusFor(revoked.status()), 401);
  EXPECT_TRUE(absl::IsNotFound(store_->RevokeAgentKey("usr_other", key.record.id, 3)));
}

// The proxy hands the same token to the same grant for RecentDelegations::
// kReuseSecs, so the upstream's table of verified tokens hits; any difference in the
// grant, or an older token, mints afresh.
TEST_F(CredentialKinds, ProxyDelegationsAreReusedForExactlyTheSameGrantWhileYoung) {
  const std::vector<std::string> scopes = {"sandbox:execute", "proxy:*"};
  const DelegationGrant first = tokens_->DelegationForProxy(user_.id, "chrono-sandbox", scopes, 0);
  EXPECT_TRUE(first.minted);
  EXPECT_EQ(CodeOf(first.token), "OK");
  const DelegationGrant again =
      tokens_->DelegationForProxy(user_.id, "chrono-sandbox", {"proxy:*", "sandbox:execute"}, 0);
  EXPECT_FALSE(again.minted);
  EXPECT_EQ(again.token, first.token);

  const DelegationGrant other_audience =
      tokens_->DelegationForProxy(user_.id, "other-service", scopes, 0);
  const DelegationGrant other_scopes =
      tokens_->DelegationForProxy(user_.id, "chrono-sandbox", {"sandbox:execute"}, 0);
  const DelegationGrant other_user =
      tokens_->DelegationForProxy("usr_bob", "chrono-sandbox", scopes, 0);
  for (const DelegationGrant& grant : {other_audience, other_scopes, other_user}) {
    EXPECT_TRUE(grant.minted);
    EXPECT_NE(grant.token, first.token);
  }

  now_ += RecentDelegations::kReuseSecs;
  EXPECT_EQ(tokens_->DelegationForProxy(user_.id, "chrono-sandbox", scopes, 0).token, first.token);
  now_ += 1;
  const DelegationGrant later = tokens_->DelegationForProxy(user_.id, "chrono-sandbox", scopes, 0);
  EXPECT_TRUE(later.minted);
  EXPECT_NE(later.token, first.token);
  now_ -= 60;  // a clock stepped back reuses nothing
  EXPECT_TRUE(tokens_->DelegationForProxy(user_.id, "chrono-sandbox", scopes, 0).minted);
}

TEST_F(CredentialKinds, ALogoutOrAKeyRotationEndsDelegationReuse) {
  const std::vector<std::string> scopes = {"sandbox:execute"};
  const std::string before =
      tokens_->DelegationForProxy(user_.id, "chrono-sandbox", scopes, 0).token;
  User revoked = user_;
  revoked.tokens_not_before_ms = base::NowUnixMs() + 1;  // as a logout sets it
  ASSERT_TRUE(store_->UpdateUser(revoked).ok());
  EXPECT_EQ(CodeOf(before), "TOKEN_REVOKED");
  const DelegationGrant after =
      tokens_->DelegationForProxy(user_.id, "chrono-sandbox", scopes, revoked.tokens_not_before_ms);
  EXPECT_TRUE(after.minted);
  EXPECT_EQ(CodeOf(after.token), "OK");  // dated no earlier than the logout

  ASSERT_TRUE(keys_->Rotate(now_).ok());
  const DelegationGrant rotated =
      tokens_->DelegationForProxy(user_.id, "chrono-sandbox", scopes, revoked.tokens_not_before_ms);
  EXPECT_TRUE(rotated.minted);
  auto verified = base::VerifyJws(rotated.token,
                                  [&](std::string_view kid) { return keys_->Lookup(kid, now_); });
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->header["kid"], keys_->current_kid());
}

TEST_F(CredentialKinds, SigningKeyFileIsPrivateAndRotationKeepsOldKeysPublished) {
  const std::string path = dir_.path() + "/signing-keys.json";
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  std::string old_token = tokens_->IssueAccess(user_.id, user_.username);
  const std::string old_kid = keys_->current_kid();
  // The key the rotation will switch to is published before it signs, so a
  // verifier holding the current JWKS trusts the next tokens at once.
  std::vector<std::string> before;
  const base::Jwks published_before = keys_->Published(now_);
  for (const base::Jwk& key : published_before.keys()) before.push_back(key.kid);
  ASSERT_EQ(before.size(), 2u);
  ASSERT_TRUE(keys_->Rotate(now_).ok());
  EXPECT_NE(keys_->current_kid(), old_kid);
  EXPECT_NE(std::find(before.begin(), before.end(), keys_->current_kid()), before.end());
  const base::Jwks published_after = keys_->Published(now_);
  EXPECT_EQ(published_after.keys().size(), 3u);  // old, current, the next upcoming
  EXPECT_NE(keys_->Published(now_).Find(old_kid), nullptr);
  EXPECT_EQ(CodeOf(old_token), "OK");  // still verifies after rotation
  EXPECT_EQ(keys_->Published(now_ + 3900).Find(old_kid), nullptr);

  // A reload sees the same keys.
  auto reloaded = KeyRing::LoadOrCreate(dir_.path(), now_, 3900);
  ASSERT_TRUE(reloaded.ok());
  EXPECT_EQ((*reloaded)->current_kid(), keys_->current_kid());

  ::chmod(path.c_str(), 0644);
  auto loose = KeyRing::LoadOrCreate(dir_.path(), now_, 3900);
  EXPECT_TRUE(absl::IsFailedPrecondition(loose.status()));
}

TEST(SigningKeyFile, MembersOfTheWrongTypeAreDataLossNotACrash) {
  const std::string secret = base::Base64UrlEncode(base::GenerateEd25519KeyPair().secret_key);
  // created_at as a string made entry.value("created_at", int64_t{0}) throw
  // out of NyxID's start-up.
  for (const nlohmann::json& entry : {
           nlohmann::json{{"kid", "nyx_1"}, {"secret_key", secret}, {"created_at", "yesterday"}},
           nlohmann::json{{"kid", "nyx_1"}, {"secret_key", secret}, {"retired_at", "never"}},
           nlohmann::json{{"kid", 1}, {"secret_key", secret}},
           nlohmann::json{{"kid", "nyx_1"}, {"secret_key", "c2hvcnQ"}},
           nlohmann::json("nyx_1"),
       }) {
    TempDir dir;
    const std::string path = dir.path() + "/signing-keys.json";
    std::ofstream(path) << nlohmann::json{{"keys", {entry}}}.dump();
    ::chmod(path.c_str(), 0600);
    auto ring = KeyRing::LoadOrCreate(dir.path(), 1'700'000'000, 3900);
    EXPECT_TRUE(absl::IsDataLoss(ring.status())) << entry.dump() << ": " << ring.status();
    EXPECT_EQ(std::string(ring.status().message()).find(secret), std::string::npos);
  }
}

}  // namespace
}  // namespace aevatar::nyxid
