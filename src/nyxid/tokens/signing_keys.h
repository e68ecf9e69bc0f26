#ifndef AEVATAR_NYXID_TOKENS_SIGNING_KEYS_H_
#define AEVATAR_NYXID_TOKENS_SIGNING_KEYS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/jws.h"
#include "nlohmann/json.hpp"
#include "nyxid/tokens/signing_key_storage.h"

namespace aevatar::nyxid {

// The broker's Ed25519 signing keys, kept in a SigningKeyStorage: the file
// <state_dir>/signing-keys.json (mode 0600; a file readable by group or
// others is refused at start-up), or the shared database of replicas.
//
// Document format:
//   {"keys":[{"kid":"nyx_…","secret_key":<base64url 64 bytes>,
//             "created_at":<unix s>,"retired_at":<unix s>|null,
//             "upcoming":bool}]}
// The last key neither retired nor upcoming signs. One upcoming key is
// published ahead of its use, so a verifier that read the JWKS since the
// last rotation already trusts the key the next rotation switches to (its
// refresh-on-unknown-kid is rate limited). Rotation retires the signing key,
// promotes the upcoming one and publishes a fresh upcoming key; a retired
// key stays in the JWKS for `publish_after_retire_secs` (the longest token
// lifetime plus skew), so tokens it signed keep verifying until they expire.
//
// Replicas: on shared storage every change (first keys, rotation) is a
// read-modify-write of the stored document, serialised across replicas, and
// each ring re-reads the document at most kSharedRefreshSecs after its last
// read (and at once, at most once a second, for a token with an unknown
// kid). So a rotation on one replica is in every replica's JWKS within
// kSharedRefreshSecs, and the key it switches to verifies everywhere at
// once: it was published as the upcoming key before. A failed re-read keeps
// the keys last read (and is retried on the next call).
class KeyRing {
 public:
  // How stale a ring on shared storage may be.
  static constexpr int64_t kSharedRefreshSecs = 2;

  // Loads the key file in `state_dir`, creating it with one fresh key on
  // first start. Errors: FailedPrecondition for a file with loose
  // permissions, DataLoss for an unreadable/corrupt file.
  static absl::StatusOr<std::unique_ptr<KeyRing>> LoadOrCreate(const std::string& state_dir,
                                                               int64_t now_unix,
                                                               int64_t publish_after_retire_secs);
  // The same on any storage (the document created there when absent).
  static absl::StatusOr<std::unique_ptr<KeyRing>> LoadOrCreate(
      std::unique_ptr<SigningKeyStorage> storage, int64_t now_unix,
      int64_t publish_after_retire_secs);

  // Signs `claims` with the current key (header alg EdDSA, typ JWT, kid).
  std::string Sign(const nlohmann::json& claims) const;

  // The public keys still published at `now_unix` (current first).
  base::Jwks Published(int64_t now_unix) const;

  // Resolves `kid` among the published keys; TOKEN_KEY_UNKNOWN (401) otherwise.
  absl::StatusOr<base::Jwk> Lookup(std::string_view kid, int64_t now_unix) const;

  // Retires the current key and starts signing with a fresh one; persists the
  // document (a file atomically, 0600) before returning.
  absl::Status Rotate(int64_t now_unix);

  std::string current_kid() const;

 private:
  struct Key {
    std::string kid;
    std::string secret_key;  // 64 bytes
    std::string public_key;  // 32 bytes
    int64_t created_at = 0;
    std::optional<int64_t> retired_at;
    bool upcoming = false;  // published, not yet signing
  };
  using Keys = std::vector<Key>;
  using Clock = std::chrono::steady_clock;

  KeyRing(std::unique_ptr<SigningKeyStorage> storage, int64_t publish_after_retire_secs)
      : storage_(std::move(storage)), publish_after_retire_secs_(publish_after_retire_secs) {}

  // Applies `change` to the stored keys (serialised with other writers) and
  // keeps the result.
  absl::Status UpdateStored(const std::function<void(Keys&)>& change)
      ABSL_LOCKS_EXCLUDED(refresh_mu_);
  // Re-reads shared storage when the keys are older than `max_age`. The
  // read happens outside mu_, so signing and verifying never wait on the
  // database (an outage can hold a read for its connect timeout). One caller
  // reads at a time; the others go on with the keys in hand, or, with
  // `wait`, wait for that read to finish first.
  void Refresh(Clock::duration max_age, bool wait = false) const ABSL_LOCKS_EXCLUDED(mu_);
  void ReadShared(Clock::duration max_age) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(refresh_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Makes sure there is a signing key and an upcoming one.
  static void Fill(Keys& keys, int64_t now_unix);
  static void RotateKeys(Keys& keys, int64_t now_unix, int64_t publish_after_retire_secs);
  static const Key& Current(const Keys& keys);
  static Key NewKey(int64_t now_unix);
  // One entry of the document; InvalidArgument naming the field.
  static absl::StatusOr<Key> ParseKey(const nlohmann::json& entry);
  // DataLoss naming `name` for a document that is not a key document.
  static absl::StatusOr<Keys> ParseDocument(const std::string& text, const std::string& name);
  static std::string Document(const Keys& keys);
  base::Jwks PublishedLocked(int64_t now_unix) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<SigningKeyStorage> storage_;
  const int64_t publish_after_retire_secs_;
  mutable absl::Mutex refresh_mu_;  // held by the one caller reading shared storage
  mutable absl::Mutex mu_;
  // Re-read from shared storage by const readers, hence mutable.
  mutable Keys keys_ ABSL_GUARDED_BY(mu_);
  mutable Clock::time_point read_at_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_TOKENS_SIGNING_KEYS_H_
