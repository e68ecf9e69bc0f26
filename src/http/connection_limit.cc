#include "http/connection_limit.h"

#include <algorithm>

#include "base/log.h"
#include "os/fd_limit.h"

namespace aevatar::http {
namespace {

// Used when the open-file limit cannot be read: the usual soft default.
constexpr uint64_t kFallbackFdLimit = 1024;

// Connections open across every server in the process.
std::atomic<int64_t> process_open{0};

int64_t ProcessBudget() {
  static const int64_t budget = [] {
    absl::StatusOr<uint64_t> limit = os::RaiseOpenFileLimit();
    if (!limit.ok()) {
      base::Log(base::LogLevel::kWarn, "http_fd_limit_unraised", "",
                {{"error", std::string(limit.status().message())}});
    }
    int64_t result = ConnectionBudgetFor(limit.ok() ? *limit : kFallbackFdLimit);
    base::Log(base::LogLevel::kInfo, "http_connection_budget", "", {{"connections", result}});
    return result;
  }();
  return budget;
}

}  // namespace

int64_t ConnectionBudgetFor(uint64_t fd_limit) {
  const uint64_t capped = std::min<uint64_t>(fd_limit, uint64_t{1} << 40);
  const uint64_t reserve = std::max<uint64_t>(256, capped / 8);
  return capped > reserve ? static_cast<int64_t>(capped - reserve) : 1;
}

ConnectionLimit::Slot::~Slot() {
  if (limit_) limit_->Release();
}

ConnectionLimit::ConnectionLimit(int max_connections) : max_connections_(max_connections) {
  ProcessBudget();  // raise the open-file limit before the first accept
}

std::optional<ConnectionLimit::Slot> ConnectionLimit::TryAcquire() {
  if (open_.fetch_add(1) >= max_connections_) {
    open_.fetch_sub(1);
    return std::nullopt;
  }
  if (process_open.fetch_add(1) >= ProcessBudget()) {
    process_open.fetch_sub(1);
    open_.fetch_sub(1);
    return std::nullopt;
  }
  return Slot(this);
}

void ConnectionLimit::Release() {
  process_open.fetch_sub(1);
  open_.fetch_sub(1);
}

}  // namespace aevatar::http
