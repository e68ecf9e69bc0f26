#include "chrono/codex/codex_run_cancels.h"

#include <algorithm>

#include "base/api_error.h"
#include "base/crypto.h"

namespace aevatar::chrono {
namespace {

// Keys hold a digest of the owner (subjects are not kept verbatim) and the
// run id; the separator cannot occur in a run id.
std::string KeyOf(const std::string& owner, const std::string& run_id) {
  return base::Sha256Hex(owner) + "/" + run_id;
}

absl::Status NotFound() {
  return base::ApiError(absl::StatusCode::kNotFound, "CODEX_RUN_NOT_FOUND",
                        "no managed Codex run with this id is going for the caller", 404);
}

}  // namespace

struct CodexRunCancels::Registration::Slot {
  os::Pipe pipe;
};

bool IsCodexRunId(std::string_view run_id) {
  if (run_id.empty() || run_id.size() > kMaxCodexRunIdBytes) return false;
  return std::all_of(run_id.begin(), run_id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

CodexRunCancels::Registration::~Registration() {
  if (owner_ != nullptr && slot_) owner_->Unregister(key_, slot_.get());
}

int CodexRunCancels::Registration::cancel_fd() const {
  return slot_ ? slot_->pipe.read_end.get() : -1;
}

absl::StatusOr<CodexRunCancels::Registration> CodexRunCancels::Register(const std::string& owner,
                                                                        const std::string& run_id) {
  auto pipe = os::MakePipe();
  if (!pipe.ok()) return pipe.status();
  auto slot = std::make_shared<Registration::Slot>();
  slot->pipe = std::move(*pipe);
  const std::string key = KeyOf(owner, run_id);
  {
    absl::MutexLock lock(&mu_);
    if (runs_.count(key) != 0) {
      return base::ApiError(absl::StatusCode::kAlreadyExists, "CODEX_RUN_ID_IN_USE",
                            "a managed Codex run with this run_id is going already; "
                            "choose a fresh run_id",
                            409);
    }
    runs_[key] = slot;
  }
  Registration registration;
  registration.owner_ = this;
  registration.key_ = key;
  registration.slot_ = std::move(slot);
  return registration;
}

absl::Status CodexRunCancels::Cancel(const std::string& owner, const std::string& run_id) {
  if (!IsCodexRunId(run_id)) return NotFound();
  absl::MutexLock lock(&mu_);
  auto it = runs_.find(KeyOf(owner, run_id));
  if (it == runs_.end()) return NotFound();
  // Under mu_: the slot (and its pipe) cannot be unregistered meanwhile.
  os::WriteWakeByte(it->second->pipe.write_end.get());
  return absl::OkStatus();
}

size_t CodexRunCancels::size() const {
  absl::MutexLock lock(&mu_);
  return runs_.size();
}

void CodexRunCancels::Unregister(const std::string& key, const Registration::Slot* slot) {
  absl::MutexLock lock(&mu_);
  auto it = runs_.find(key);
  if (it != runs_.end() && it->second.get() == slot) runs_.erase(it);
}

}  // namespace aevatar::chrono
