#include "nyxid/tokens/signing_key_storage.h"

#include "absl/synchronization/mutex.h"
#include "os/atomic_file.h"

namespace aevatar::nyxid {
namespace {

// A signing-key file is small; 4 MiB bounds a corrupt or hostile one.
constexpr size_t kMaxKeyFileBytes = 4 << 20;

class FileStorage final : public SigningKeyStorage {
 public:
  explicit FileStorage(std::string path) : path_(std::move(path)) {}

  absl::StatusOr<std::string> Read() override {
    absl::MutexLock lock(&mu_);
    return os::ReadPrivateFile(path_, kMaxKeyFileBytes);
  }

  absl::Status Update(const Change& change) override {
    absl::MutexLock lock(&mu_);
    auto text = os::ReadPrivateFile(path_, kMaxKeyFileBytes);
    if (!text.ok() && !absl::IsNotFound(text.status())) return text.status();
    std::optional<std::string> current;
    if (text.ok()) current = *std::move(text);
    auto next = change(current);
    if (!next.ok()) return next.status();
    if (current && *next == *current) return absl::OkStatus();
    return os::WriteFileAtomically(path_, *next, 0600);
  }

  bool shared() const override { return false; }
  std::string name() const override { return path_; }

 private:
  const std::string path_;
  absl::Mutex mu_;  // one writer of the file at a time
};

}  // namespace

std::unique_ptr<SigningKeyStorage> FileSigningKeyStorage(const std::string& state_dir) {
  return std::make_unique<FileStorage>(state_dir + "/signing-keys.json");
}

}  // namespace aevatar::nyxid
