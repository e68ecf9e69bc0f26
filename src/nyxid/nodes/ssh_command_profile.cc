#include "nyxid/nodes/ssh_command_profile.h"

namespace aevatar::nyxid {
namespace {

constexpr std::string_view kPrefix = "aevatar-codex-exec v1 --timeout-secs ";

}  // namespace

std::string AevatarSshCommand(int timeout_secs) {
  return std::string(kPrefix) + std::to_string(timeout_secs);
}

std::optional<int> ParseAevatarSshCommand(std::string_view command) {
  if (command.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view digits = command.substr(kPrefix.size());
  if (digits.empty() || digits.size() > 4 || digits.front() == '0') return std::nullopt;
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value > kMaxSshTimeoutSecs) return std::nullopt;
  return value;
}

}  // namespace aevatar::nyxid
