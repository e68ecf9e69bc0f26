#include "nyxid/tokens/signing_keys.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/json_read.h"

namespace aevatar::nyxid {

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

absl::StatusOr<KeyRing::Keys> KeyRing::ParseDocument(const std::string& text,
                                                     const std::string& name) {
  auto doc = base::ParseJsonObject(text);
  if (!doc.ok()) return absl::DataLossError(absl::StrCat(name, " is not a signing key file"));
  auto entries = base::RequiredArray(*doc, "keys");
  if (!entries.ok()) return absl::DataLossError(absl::StrCat(name, " is not a signing key file"));
  Keys keys;
  for (const nlohmann::json& entry : **entries) {
    // The document is ours, but a damaged one must stop start-up with a
    // typed error naming it, never with an exception.
    auto key = ParseKey(entry);
    if (!key.ok()) {
      return absl::DataLossError(
          absl::StrCat(name, " holds a malformed key: ", key.status().message()));
    }
    keys.push_back(*std::move(key));
  }
  return keys;
}

std::string KeyRing::Document(const Keys& keys) {
  nlohmann::json entries = nlohmann::json::array();
  for (const Key& key : keys) {
    entries.push_back({{"kid", key.kid},
                       {"secret_key", base::Base64UrlEncode(key.secret_key)},
                       {"created_at", key.created_at},
                       {"retired_at", key.retired_at ? nlohmann::json(*key.retired_at) : nullptr},
                       {"upcoming", key.upcoming}});
  }
  return nlohmann::json{{"keys", entries}}.dump(2) + "\n";
}

absl::StatusOr<std::unique_ptr<KeyRing>> KeyRing::LoadOrCreate(const std::string& state_dir,
                                                               int64_t now_unix,
                                                               int64_t publish_after_retire_secs) {
  return LoadOrCreate(FileSigningKeyStorage(state_dir), now_unix, publish_after_retire_secs);
}

absl::StatusOr<std::unique_ptr<KeyRing>> KeyRing::LoadOrCreate(
    std::unique_ptr<SigningKeyStorage> storage, int64_t now_unix,
    int64_t publish_after_retire_secs) {
  std::unique_ptr<KeyRing> ring(new KeyRing(std::move(storage), publish_after_retire_secs));
  if (absl::Status st = ring->UpdateStored([&](Keys& keys) { Fill(keys, now_unix); }); !st.ok()) {
    return st;
  }
  return ring;
}

absl::Status KeyRing::UpdateStored(const std::function<void(Keys&)>& change) {
  // No re-read may land between the write and keys_ = result (it could
  // bring back the keys from before the write).
  absl::MutexLock refresh(&refresh_mu_);
  Keys result;
  absl::Status st = storage_->Update(
      [&](const std::optional<std::string>& current) -> absl::StatusOr<std::string> {
        Keys keys;
        if (current) {
          auto parsed = ParseDocument(*current, storage_->name());
          if (!parsed.ok()) return parsed.status();
          keys = *std::move(parsed);
        }
        const std::string before = current ? Document(keys) : "";
        change(keys);
        result = keys;
        const std::string after = Document(keys);
        // Unchanged keys leave the stored text (and its formatting) alone.
        return current && after == before ? *current : after;
      });
  if (!st.ok()) return st;
  absl::MutexLock lock(&mu_);
  keys_ = std::move(result);
  read_at_ = Clock::now();
  return absl::OkStatus();
}

void KeyRing::Refresh(Clock::duration max_age, bool wait) const {
  if (!storage_->shared()) return;
  if (wait) {
    refresh_mu_.Lock();
  } else if (!refresh_mu_.TryLock()) {
    return;  // another caller is reading
  }
  ReadShared(max_age);
  refresh_mu_.Unlock();
}

void KeyRing::ReadShared(Clock::duration max_age) const {
  {
    absl::MutexLock lock(&mu_);
    if (Clock::now() - read_at_ < max_age) return;
    read_at_ = Clock::now();  // a failure is retried after max_age, not on every call
  }
  auto text = storage_->Read();
  if (!text.ok()) return;
  auto keys = ParseDocument(*text, storage_->name());
  // Never swap in a ring without a signing key (a document being written by
  // a newer binary, say): the last good keys stay.
  if (!keys.ok() || std::none_of(keys->begin(), keys->end(),
                                 [](const Key& k) { return !k.retired_at && !k.upcoming; })) {
    return;
  }
  absl::MutexLock lock(&mu_);
  keys_ = *std::move(keys);
}

void KeyRing::Fill(Keys& keys, int64_t now_unix) {
  auto live = [](const Key& key) { return !key.retired_at; };
  const bool has_current =
      std::any_of(keys.begin(), keys.end(), [&](const Key& k) { return live(k) && !k.upcoming; });
  const bool has_upcoming =
      std::any_of(keys.begin(), keys.end(), [&](const Key& k) { return live(k) && k.upcoming; });
  if (has_current && has_upcoming) return;
  if (!has_current) {
    // The published upcoming key signs first (verifiers already know it).
    auto upcoming =
        std::find_if(keys.begin(), keys.end(), [&](const Key& k) { return live(k) && k.upcoming; });
    if (upcoming != keys.end()) {
      upcoming->upcoming = false;
    } else {
      keys.push_back(NewKey(now_unix));
    }
  }
  Key next = NewKey(now_unix);
  next.upcoming = true;
  keys.push_back(std::move(next));
}

const KeyRing::Key& KeyRing::Current(const Keys& keys) {
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    if (!it->retired_at && !it->upcoming) return *it;
  }
  return keys.back();  // unreachable: Fill guarantees a current key
}

std::string KeyRing::Sign(const nlohmann::json& claims) const {
  Refresh(std::chrono::seconds(kSharedRefreshSecs));
  absl::MutexLock lock(&mu_);
  const Key& key = Current(keys_);
  return base::SignJws(claims, key.kid, key.secret_key);
}

base::Jwks KeyRing::Published(int64_t now_unix) const {
  Refresh(std::chrono::seconds(kSharedRefreshSecs));
  absl::MutexLock lock(&mu_);
  return PublishedLocked(now_unix);
}

base::Jwks KeyRing::PublishedLocked(int64_t now_unix) const {
  base::Jwks jwks;
  const Key& current = Current(keys_);
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
  Refresh(std::chrono::seconds(kSharedRefreshSecs));
  {
    absl::MutexLock lock(&mu_);
    const base::Jwks published = PublishedLocked(now_unix);
    if (const base::Jwk* key = published.Find(kid)) return *key;
  }
  // Another replica may have published it since the last read: re-read,
  // at most once a second (an unknown kid costs a caller nothing), or wait
  // for the read in progress.
  Refresh(std::chrono::seconds(1), /*wait=*/true);
  {
    absl::MutexLock lock(&mu_);
    const base::Jwks reread = PublishedLocked(now_unix);
    if (const base::Jwk* key = reread.Find(kid)) return *key;
  }
  return base::ApiError(absl::StatusCode::kUnauthenticated, "TOKEN_KEY_UNKNOWN",
                        "the token was signed by an unknown key", 401);
}

void KeyRing::RotateKeys(Keys& keys, int64_t now_unix, int64_t publish_after_retire_secs) {
  for (Key& key : keys) {
    if (!key.retired_at && !key.upcoming) key.retired_at = now_unix;
  }
  // Keys retired long enough ago to have no live tokens are dropped for good.
  std::erase_if(keys, [&](const Key& key) {
    return key.retired_at && now_unix >= *key.retired_at + publish_after_retire_secs;
  });
  // The upcoming key, published since the last rotation, signs from now on;
  // a fresh one is published to follow it.
  Fill(keys, now_unix);
}

absl::Status KeyRing::Rotate(int64_t now_unix) {
  return UpdateStored([&](Keys& keys) { RotateKeys(keys, now_unix, publish_after_retire_secs_); });
}

std::string KeyRing::current_kid() const {
  Refresh(std::chrono::seconds(kSharedRefreshSecs));
  absl::MutexLock lock(&mu_);
  return Current(keys_).kid;
}

}  // namespace aevatar::nyxid
