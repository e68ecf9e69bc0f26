#ifndef AEVATAR_AEVATAR_VAULT_VAULT_KEYRING_H_
#define AEVATAR_AEVATAR_VAULT_VAULT_KEYRING_H_

#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

// aevatar's vault keys (32 bytes each; base::SecretBoxSeal, XChaCha20-Poly1305):
// the current key, which seals every new value, and during a key rotation
// (key_rotation.h) the retiring key, which only opens values not yet resealed.
//
// A sealed value carries no key id: Open tries the current key, then the
// retiring one. The AEAD tag makes a wrong key fail cleanly (DataLoss), and at
// most two keys are ever live, so a miss costs one extra failed decryption
// during a rotation and nothing otherwise; stored values need no new format.
//
// Thread-safe: stores seal and open from request threads while the rotation
// swaps keys.
namespace aevatar::orchestrator {

class VaultKeyring {
 public:
  // Requires: `current` is 32 bytes; `retiring` is empty or 32 bytes.
  explicit VaultKeyring(std::string current, std::string retiring = "");

  // Seals `plaintext` under the current key.
  std::string Seal(std::string_view plaintext) const;

  // Opens `sealed` under the current key, else the retiring one. DataLoss
  // when neither opens it (tampered, or sealed under a key no longer held).
  absl::StatusOr<std::string> Open(std::string_view sealed) const;

  // Whether `sealed` opens under the current key alone.
  bool OpensWithCurrent(std::string_view sealed) const;

  // Starts a rotation: `next` (32 bytes) seals from now on and the current
  // key becomes the retiring one. A no-op when `next` is already current.
  // FailedPrecondition while another rotation still holds a retiring key.
  absl::Status BeginRotation(const std::string& next);

  // Ends a rotation: the retiring key is forgotten and opens nothing more.
  void Retire();

  // Whether a retiring key is held.
  bool rotating() const;

 private:
  mutable absl::Mutex mu_;
  std::string current_ ABSL_GUARDED_BY(mu_);
  std::string retiring_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_VAULT_VAULT_KEYRING_H_
