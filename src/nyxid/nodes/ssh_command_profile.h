#ifndef AEVATAR_NYXID_NODES_SSH_COMMAND_PROFILE_H_
#define AEVATAR_NYXID_NODES_SSH_COMMAND_PROFILE_H_

#include <optional>
#include <string>
#include <string_view>

// The one command NyxID's SSH route carries and a node runs on an SSH
// target: the Aevatar command profile of host/aevatar-codex-wrapper,
//   aevatar-codex-exec v1 --timeout-secs N      (N: 1..3600, plain decimal)
// with the prompt on stdin. NyxID, the node and the wrapper each refuse
// anything else.
namespace aevatar::nyxid {

inline constexpr int kMaxSshTimeoutSecs = 3600;
inline constexpr size_t kMaxSshStdinBytes = size_t{1} << 20;

std::string AevatarSshCommand(int timeout_secs);

// N of an exact profile command; nullopt for anything else.
std::optional<int> ParseAevatarSshCommand(std::string_view command);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_NODES_SSH_COMMAND_PROFILE_H_
