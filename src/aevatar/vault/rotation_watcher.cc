#include "aevatar/vault/rotation_watcher.h"

#include <algorithm>
#include <utility>

#include "aevatar/vault/key_rotation.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

constexpr absl::Duration kMaxBackoff = absl::Minutes(5);

}  // namespace

RotationWatcher::RotationWatcher(Options options, VaultKeyring* keyring)
    : options_(std::move(options)), keyring_(keyring) {}

RotationWatcher::~RotationWatcher() { Stop(); }

void RotationWatcher::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void RotationWatcher::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void RotationWatcher::Loop() {
  for (;;) {
    const absl::Duration delay = Step();
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&stop_), delay);
    if (stop_) return;
  }
}

absl::Duration RotationWatcher::Failed(const char* stage, const absl::Status& status) {
  ++failures_;
  const absl::Duration delay =
      std::min(kMaxBackoff, options_.poll_interval * (int64_t{1} << std::min(failures_, 16)));
  base::Log(base::LogLevel::kError, "aevatar.vault_rotation.failed", "",
            {{"stage", stage},
             {"code", absl::StatusCodeToString(status.code())},
             {"error", std::string(status.message())},
             {"retry_in_ms", absl::ToInt64Milliseconds(delay)}});
  return delay;
}

absl::Duration RotationWatcher::Step() {
  if (options_.retiring_key.empty() && !options_.key_file.empty()) {
    auto staged = ReadStagedKey(options_.key_file);
    if (!staged.ok()) return Failed("read_staged_key", staged.status());
    if (!staged->has_value()) return options_.poll_interval;
    if (**staged == options_.current_key) {
      // Promoted before a crash: only the staged copy is left to remove.
      absl::Status st = PromoteStagedKey(options_.key_file, options_.current_key);
      return st.ok() ? options_.poll_interval : Failed("promote", st);
    }
    if (absl::Status st = keyring_->BeginRotation(**staged); !st.ok()) return Failed("begin", st);
    options_.retiring_key = std::exchange(options_.current_key, **std::move(staged));
    base::Log(base::LogLevel::kInfo, "aevatar.vault_rotation.started", "", {});
  }
  if (options_.retiring_key.empty()) return options_.poll_interval;
  if (absl::Status st = ResealAll(options_.state_dir, *keyring_, options_.retiring_key); !st.ok()) {
    return Failed("reseal", st);
  }
  if (!options_.key_file.empty()) {
    if (absl::Status st = PromoteStagedKey(options_.key_file, options_.current_key); !st.ok()) {
      return Failed("promote", st);
    }
  }
  options_.retiring_key.clear();
  failures_ = 0;
  base::Log(base::LogLevel::kInfo, "aevatar.vault_rotation.done", "", {});
  return options_.poll_interval;
}

}  // namespace aevatar::orchestrator
