#ifndef AEVATAR_AEVATAR_CODEX_PRIVATE_SSH_RUN_H_
#define AEVATAR_AEVATAR_CODEX_PRIVATE_SSH_RUN_H_

#include <chrono>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/clients/nyxid_client.h"
#include "aevatar/codex/codex_exec_args.h"
#include "nlohmann/json.hpp"

// One approved private_ssh codex_exec call: NyxID's SSH route of the
// caller's service, relayed by the owner's node to the host's forced-command
// wrapper (docs/private-ssh.md):
//   POST {nyxid}/api/v1/ssh/{service}/exec
//     {"principal", "command": "aevatar-codex-exec v1 --timeout-secs N",
//      "stdin": prompt}
// with the caller's own credential. The result is NyxID's raw SSH response
// (spec: not the managed shape): {"exit_code", "timed_out", "stdout",
// "stderr"}, a non-zero exit included. Errors are typed and belong to the
// user's route: node_offline 503, ssh_service_not_found 404,
// ssh_principal_not_allowed 403, ssh_target_not_allowed 403,
// ssh_command_refused 403, ssh_key_unavailable 409, ssh_host_key_mismatch
// 502, ssh_auth_failed 502, ssh_connect_failed 502, ssh_route_timeout 504,
// ssh_route_denied 403 (NyxID refused the caller's credential),
// ssh_route_unavailable 502 (NyxID unreachable or its reply malformed).
namespace aevatar::orchestrator {

// The exchange's bound for a run of `timeout_secs`: the run plus NyxID's
// relay margin plus this client's own.
std::chrono::milliseconds PrivateSshExchangeTimeout(int timeout_secs);

absl::StatusOr<nlohmann::json> RunPrivateSsh(
    const NyxidClient& nyxid, const std::string& credential, const CodexExecArgs& args,
    std::optional<std::chrono::milliseconds> budget = std::nullopt);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CODEX_PRIVATE_SSH_RUN_H_
