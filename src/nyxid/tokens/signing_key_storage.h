#ifndef AEVATAR_NYXID_TOKENS_SIGNING_KEY_STORAGE_H_
#define AEVATAR_NYXID_TOKENS_SIGNING_KEY_STORAGE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace aevatar::nyxid {

// Where a KeyRing keeps its key document (the JSON text of
// signing_keys.h): a private file in the state dir for one broker, or a row
// of the shared database that every replica reads (nyxid/store/
// postgres_nyxid.h). Implementations are thread-safe.
class SigningKeyStorage {
 public:
  // Returns the new document for the current one (nullopt before the first
  // key was made), or an error that leaves the stored one unchanged.
  using Change =
      std::function<absl::StatusOr<std::string>(const std::optional<std::string>& current)>;

  virtual ~SigningKeyStorage() = default;

  // The document; NotFound before the first Update. Errors say what is
  // wrong with the storage (loose file permissions: FailedPrecondition; a
  // document that cannot be opened: DataLoss) and never quote a key.
  virtual absl::StatusOr<std::string> Read() = 0;

  // Atomically replaces the document with change(current), writing nothing
  // when it returns the current text. Writers in other processes sharing
  // the storage are serialised: `change` always sees the latest document.
  virtual absl::Status Update(const Change& change) = 0;

  // Whether other processes may change the document (a KeyRing on shared
  // storage re-reads it; see KeyRing::kSharedRefreshSecs).
  virtual bool shared() const = 0;

  // Names the storage in errors ("<state-dir>/signing-keys.json").
  virtual std::string name() const = 0;
};

// The key file <state_dir>/signing-keys.json, mode 0600, written atomically;
// a file readable by group or others is refused (FailedPrecondition). Not
// shared: one process owns it.
std::unique_ptr<SigningKeyStorage> FileSigningKeyStorage(const std::string& state_dir);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_TOKENS_SIGNING_KEY_STORAGE_H_
