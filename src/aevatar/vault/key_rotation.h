#ifndef AEVATAR_AEVATAR_VAULT_KEY_ROTATION_H_
#define AEVATAR_AEVATAR_VAULT_KEY_ROTATION_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aevatar/vault/vault_keyring.h"

// Rotating aevatar's vault key without stopping it.
//
// Theory of operation. The key lives in a file K (--vault-key-file, else
// <state_dir>/vault.key). `aevatar vault rotate-key` stages the new key beside
// it, in K.next (0600, written atomically); the running aevatar polls for
// that file (RotationWatcher) and then:
//   1. BeginRotation: the new key seals every new value; the old key only
//      opens values not yet resealed (vault_keyring.h);
//   2. sweeps every sealed column (reseal.h) until a pass finds no value
//      under the old key;
//   3. retires the old key in memory, then sweeps once more with it held
//      aside (a value sealed just before step 1 and stored after the last
//      pass), and compacts the files so no old ciphertext lingers;
//   4. promotes: writes the new key over K (atomically), then removes K.next.
// Requests are served throughout; reads open either key until step 3.
//
// Interruption. Until step 4 both keys are on disk (K and K.next), so a crash
// or kill at any point loses nothing: at start-up a staged K.next means "a
// rotation is under way", aevatar seals with it, opens with both, and resumes
// at step 1 (a row already resealed is skipped). After the write of step 4,
// K and K.next are equal and start-up only removes K.next. A value that opens
// under neither key stops the rotation (DataLoss in the log); both keys stay,
// every read keeps working, and the old key is not retired.
//
// With the key in AEVATAR_VAULT_KEY there is no file to stage: the operator
// restarts aevatar with the new key there and the old one in
// AEVATAR_VAULT_PREVIOUS_KEY, and steps 1-3 run in the background.
namespace aevatar::orchestrator {

// K.next for the key file K.
std::string StagedKeyPath(const std::string& key_file);

// Stages `next_key` (32 bytes) for the key in `key_file`: FailedPrecondition
// when the key file is missing or `next_key` is the current key,
// AlreadyExists when a rotation is already staged.
absl::Status StageNextKey(const std::string& key_file, const std::string& next_key);

// The key staged beside `key_file`, nullopt when none. DataLoss when the
// staged file is not exactly 32 bytes; FailedPrecondition when others may
// read it.
absl::StatusOr<std::optional<std::string>> ReadStagedKey(const std::string& key_file);

// Steps 2 and 3 above, once `keyring` seals with the new key (its retiring
// key being `retiring_key`): returns when no value in `state_dir` opens
// under `retiring_key` and the keyring no longer holds it. On error the
// keyring keeps both keys and the call may be repeated.
absl::Status ResealAll(const std::string& state_dir, VaultKeyring& keyring,
                       const std::string& retiring_key);

// Step 4: `new_key` becomes the content of `key_file`; the staged file goes.
absl::Status PromoteStagedKey(const std::string& key_file, const std::string& new_key);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_VAULT_KEY_ROTATION_H_
