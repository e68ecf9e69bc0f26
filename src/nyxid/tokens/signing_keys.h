#ifndef AEVATAR_NYXID_TOKENS_SIGNING_KEYS_H_
#define AEVATAR_NYXID_TOKENS_SIGNING_KEYS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/jws.h"
#include "nlohmann/json.hpp"

namespace aevatar::nyxid {

// The broker's Ed25519 signing keys, kept in <state_dir>/signing-keys.json
// (mode 0600; a file readable by group or others is refused at start-up).
//
// File format:
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
class KeyRing {
 public:
  // Loads the key file in `state_dir`, creating it with one fresh key on
  // first start. Errors: FailedPrecondition for a file with loose
  // permissions, DataLoss for an unreadable/corrupt file.
  static absl::StatusOr<std::unique_ptr<KeyRing>> LoadOrCreate(const std::string& state_dir,
                                                               int64_t now_unix,
                                                               int64_t publish_after_retire_secs);

  // Signs `claims` with the current key (header alg EdDSA, typ JWT, kid).
  std::string Sign(const nlohmann::json& claims) const;

  // The public keys still published at `now_unix` (current first).
  base::Jwks Published(int64_t now_unix) const;

  // Resolves `kid` among the published keys; TOKEN_KEY_UNKNOWN (401) otherwise.
  absl::StatusOr<base::Jwk> Lookup(std::string_view kid, int64_t now_unix) const;

  // Retires the current key and starts signing with a fresh one; persists the
  // file (atomically, 0600) before returning.
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
  KeyRing(std::string path, int64_t publish_after_retire_secs)
      : path_(std::move(path)), publish_after_retire_secs_(publish_after_retire_secs) {}
  absl::Status SaveLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes sure there is a signing key and an upcoming one (saving when it
  // added either).
  absl::Status FillLocked(int64_t now_unix) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const Key& CurrentLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static Key NewKey(int64_t now_unix);
  // One entry of the key file; InvalidArgument naming the field.
  static absl::StatusOr<Key> ParseKey(const nlohmann::json& entry);

  const std::string path_;
  const int64_t publish_after_retire_secs_;
  mutable absl::Mutex mu_;
  std::vector<Key> keys_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_TOKENS_SIGNING_KEYS_H_
