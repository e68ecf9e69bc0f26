#include "nyxid/tokens/signing_keys.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "os/atomic_file.h"

namespace aevatar::nyxid {
namespace {

constexpr char kFileName[] = "signing-keys.json";

}  // namespace

absl::StatusOr<KeyRing::Key> KeyRing::ParseKey(const nlohmann::json& entry) {
  auto kid = base::RequiredString(entry, "kid");
  auto secret_text = base::RequiredString(entry, "secret_key");
  auto created_at = base::OptionalInt(entry, "created_at");
  auto retired_at = base::OptionalInt(entry, "retired_at");
  auto upcoming = base::OptionalBool(entry, "upcoming");
  for (const absl::Status& st : {kid.status(), secret_text.status(), created_at.status(),
                                 retired_at.status(), upcoming.status()}) {
    if (!st.ok()) return st;
  }
  auto secret = base::Base64UrlDecode(*secret_text);
  if (kid->empty() || !secret.ok() || secret->size() != 64) {
    return absl::InvalidArgumentError("field 'kid' or 'secret_key' is not a key");
  }
  Key key;
  key.kid = *std::move(kid);
  key.secret_key = *secret;
  key.public_key = secret->substr(32);  // libsodium layout: seed || public key
  key.created_at = created_at->value_or(0);
  key.retired_at = *retired_at;
  key.upcoming = upcoming->value_or(false);
  return key;
}

KeyRing::Key KeyRing::NewKey(int64_t now_unix) {
  base::Ed25519KeyPair pair = base::GenerateEd25519KeyPair();
  Key key;
  // The kid names the key, not its contents: random, so it reveals nothing.
  key.kid = base::RandomId("nyx_");
  key.secret_key = std::move(pair.secret_key);
  key.public_key = std::move(pair.public_key);
  key.created_at = now_unix;
  return key;
}

absl::StatusOr<std::unique_ptr<KeyRing>> KeyRing::LoadOrCreate(const std::string& state_dir,
                                                               int64_t now_unix,
                                                               int64_t publish_after_retire_secs) {
  const std::string path = state_dir + "/" + kFileName;
  std::unique_ptr<KeyRing> ring(new KeyRing(path, publish_after_retire_secs));
  // A signing-key file is small; 4 MiB bounds a corrupt or hostile one.
  auto text = os::ReadPrivateFile(path, 4 << 20);
  if (absl::IsNotFound(text.status())) {
    absl::MutexLock lock(&ring->mu_);
    if (absl::Status filled = ring->FillLocked(now_unix); !filled.ok()) return filled;
    return ring;
  }
  if (!text.ok()) return text.status();
  auto doc = base::ParseJsonObject(*text);
  if (!doc.ok()) return absl::DataLossError(absl::StrCat(path, " is not a signing key file"));
  auto entries = base::RequiredArray(*doc, "keys");
  if (!entries.ok()) return absl::DataLossError(absl::StrCat(path, " is not a signing key file"));
  absl::MutexLock lock(&ring->mu_);
  for (const nlohmann::json& entry : **entries) {
    // The file is ours, but a damaged one must stop start-up with a typed
    // error naming the file, never with an exception.
    auto key = ParseKey(entry);
    if (!key.ok()) {
      return absl::DataLossError(
          absl::StrCat(path, " holds a malformed key: ", key.status().message()));
    }
    ring->keys_.push_back(*std::move(key));
  }
  if (absl::Status filled = ring->FillLocked(now_unix); !filled.ok()) return filled;
  return ring;
}

absl::Status KeyRing::FillLocked(int64_t now_unix) {
  auto live = [](const Key& key) { return !key.retired_at; };
  const bool has_current =
      std::any_of(keys_.begin(), keys_.end(), [&](const Key& k) { return live(k) && !k.upcoming; });
  const bool has_upcoming =
      std::any_of(keys_.begin(), keys_.end(), [&](const Key& k) { return live(k) && k.upcoming; });
  if (has_current && has_upcoming) return absl::OkStatus();
  if (!has_current) {
    // The published upcoming key signs first (verifiers already know it).
    auto upcoming = std::find_if(keys_.begin(), keys_.end(),
                                 [&](const Key& k) { return live(k) && k.upcoming; });
    if (upcoming != keys_.end()) {
      upcoming->upcoming = false;
    } else {
      keys_.push_back(NewKey(now_unix));
    }
  }
  Key next = NewKey(now_unix);
  next.upcoming = true;
  keys_.push_back(std::move(next));
  return SaveLocked();
}

absl::Status KeyRing::SaveLocked() const {
  nlohmann::json keys = nlohmann::json::array();
  for (const Key& key : keys_) {
    keys.push_back({{"kid", key.kid},
                    {"secret_key", base::Base64UrlEncode(key.secret_key)},
                    {"created_at", key.created_at},
                    {"retired_at", key.retired_at ? nlohmann::json(*key.retired_at) : nullptr},
                    {"upcoming", key.upcoming}});
  }
  return os::WriteFileAtomically(path_, nlohmann::json{{"keys", keys}}.dump(2) + "\n", 0600);
}

const KeyRing::Key& KeyRing::CurrentLocked() const {
  for (auto it = keys_.rbegin(); it != keys_.rend(); ++it) {
    if (!it->retired_at && !it->upcoming) return *it;
  }
  return keys_.back();  // unreachable: FillLocked guarantees a current key
}

std::string KeyRing::Sign(const nlohmann::json& claims) const {
  absl::MutexLock lock(&mu_);
  const Key& key = CurrentLocked();
  return base::SignJws(claims, key.kid, key.secret_key);
}

base::Jwks KeyRing::Published(int64_t now_unix) const {
  absl::MutexLock lock(&mu_);
  base::Jwks jwks;
  const Key& current = CurrentLocked();
  jwks.Add({current.kid, current.public_key});
  for (auto it = keys_.rbegin(); it != keys_.rend(); ++it) {
    if (it->kid == current.kid) continue;
    if (!it->retired_at || now_unix < *it->retired_at + publish_after_retire_secs_) {
      jwks.Add({it->kid, it->public_key});  // the upcoming key, or a retired one still in use
    }
  }
  return jwks;
}

absl::StatusOr<base::Jwk> KeyRing::Lookup(std::string_view kid, int64_t now_unix) const {
  base::Jwks published = Published(now_unix);
  if (const base::Jwk* key = published.Find(kid)) return *key;
  return base::ApiError(absl::StatusCode::kUnauthenticated, "TOKEN_KEY_UNKNOWN",
                        "the token was signed by an unknown key", 401);
}

absl::Status KeyRing::Rotate(int64_t now_unix) {
  absl::MutexLock lock(&mu_);
  for (Key& key : keys_) {
    if (!key.retired_at && !key.upcoming) key.retired_at = now_unix;
  }
  // Keys retired long enough ago to have no live tokens are dropped for good.
  std::erase_if(keys_, [&](const Key& key) {
    return key.retired_at && now_unix >= *key.retired_at + publish_after_retire_secs_;
  });
  // The upcoming key, published since the last rotation, signs from now on;
  // a fresh one is published to follow it.
  return FillLocked(now_unix);
}

std::string KeyRing::current_kid() const {
  absl::MutexLock lock(&mu_);
  return CurrentLocked().kid;
}

}  // namespace aevatar::nyxid
