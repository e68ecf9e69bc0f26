#ifndef AEVATAR_NYXID_NODE_AGENT_SSH_RELAY_H_
#define AEVATAR_NYXID_NODE_AGENT_SSH_RELAY_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "nyxid/node_agent/node_profile.h"

// What a node does with NyxID's "ssh_exec" request: check it against the
// profile (the command profile, allowed_targets, a held key for the service
// and principal), then run the host's OpenSSH client with that key and the
// pinned host key, never any other host verification.
namespace aevatar::nyxid::node {

// The answer to send back (without request_id): {"type": "ssh_result",
// exit_code, timed_out, stdout, stderr} or {"type": "ssh_error", code,
// detail} with code SSH_COMMAND_REFUSED, SSH_TARGET_NOT_ALLOWED,
// SSH_KEY_UNAVAILABLE, SSH_HOST_KEY_MISMATCH, SSH_AUTH_FAILED or
// SSH_CONNECT_FAILED. `request` is NyxID's message, read as hostile input.
nlohmann::json RunSshExec(const NodeProfile& profile, const NodeSecrets& secrets,
                          const nlohmann::json& request);

// Pins the host key of host:port in the profile's known_hosts (ssh-keyscan).
// With `rotate` false an existing, different pin is FailedPrecondition
// SSH_HOST_KEY_MISMATCH (nothing changes); with `rotate` true it is
// replaced. Returns the pinned key types.
absl::StatusOr<std::string> PinHostKey(const NodeProfile& profile, const std::string& host,
                                       int port, bool rotate);

}  // namespace aevatar::nyxid::node

#endif  // AEVATAR_NYXID_NODE_AGENT_SSH_RELAY_H_
