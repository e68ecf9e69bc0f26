#ifndef AEVATAR_AEVATAR_VAULT_ROTATION_WATCHER_H_
#define AEVATAR_AEVATAR_VAULT_ROTATION_WATCHER_H_

#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "aevatar/vault/vault_keyring.h"

// The running aevatar's side of a vault key rotation (key_rotation.h): a
// thread that polls for a staged key beside the key file, and runs a rotation
// it finds (or one under way at start-up) to its end while requests go on.
// A failed rotation is logged (aevatar.vault_rotation.failed, with the
// reason, never a key) and retried with a doubling delay up to 5 minutes;
// meanwhile both keys open what aevatar keeps.
//
// Why a staged file rather than an admin endpoint: whoever may write beside
// the key file already holds the key, so the file system is the authority;
// no listener, credential or key crosses the network, and a rotation staged
// while aevatar is down simply runs at its next start.
namespace aevatar::orchestrator {

class RotationWatcher {
 public:
  struct Options {
    std::string state_dir;
    // The key file to watch (K.next beside it); "" when the key came from the
    // environment (then only a rotation under way at start-up runs).
    std::string key_file;
    std::string current_key;   // what the keyring seals with
    std::string retiring_key;  // the keyring's retiring key, "" when none
    absl::Duration poll_interval = absl::Seconds(1);
  };

  // Requires: `keyring` outlives the watcher and holds the keys `options` names.
  RotationWatcher(Options options, VaultKeyring* keyring);
  ~RotationWatcher();
  RotationWatcher(const RotationWatcher&) = delete;
  RotationWatcher& operator=(const RotationWatcher&) = delete;

  // Starts the thread; Stop() (also on destruction) ends it, waiting for a
  // sweep pass under way.
  void Start();
  void Stop();

 private:
  void Loop();
  // One look (and, when due, one rotation attempt); returns the delay before
  // the next.
  absl::Duration Step();
  absl::Duration Failed(const char* stage, const absl::Status& status);

  Options options_;  // current_key and retiring_key are the thread's own
  VaultKeyring* keyring_;
  int failures_ = 0;  // consecutive, for the backoff; the thread's own
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_VAULT_ROTATION_WATCHER_H_
