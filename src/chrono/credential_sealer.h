#ifndef AEVATAR_CHRONO_CREDENTIAL_SEALER_H_
#define AEVATAR_CHRONO_CREDENTIAL_SEALER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/run_spec.h"

namespace aevatar::chrono {

// Seals the server-granted program environment (an Agent Key) before it is
// stored with a queued operation, so the store never holds it in the clear.
// The 32-byte key lives in `<state_dir>/at-rest.key` (0600), created on
// first use, or in a key file shared by every replica of a store.
// Thread-safe after construction.
class CredentialSealer {
 public:
  static absl::StatusOr<CredentialSealer> LoadOrCreate(const std::string& state_dir);
  // The key in `key_file`, which must exist (a key made here would differ
  // from the other replicas'), be private to its owner (no group or other
  // access) and hold exactly 32 bytes. FailedPrecondition or
  // InvalidArgument naming the file otherwise; never shows the key.
  static absl::StatusOr<CredentialSealer> LoadShared(const std::string& key_file);

  // "" for an empty environment.
  std::string Seal(const std::vector<sandbox::EnvVar>& env) const;
  absl::StatusOr<std::vector<sandbox::EnvVar>> Unseal(const std::string& sealed) const;

 private:
  explicit CredentialSealer(std::string key) : key_(std::move(key)) {}
  std::string key_;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_CREDENTIAL_SEALER_H_
