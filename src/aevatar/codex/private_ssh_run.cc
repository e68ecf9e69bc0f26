#include "aevatar/codex/private_ssh_run.h"

#include <map>

#include "absl/strings/ascii.h"
#include "base/api_error.h"
#include "base/json_read.h"
#include "nyxid/nodes/ssh_command_profile.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// NyxID's relay margin over the run (nodes/ssh_api.cc) plus this client's.
constexpr std::chrono::seconds kExchangeMargin{45};

absl::Status SshError(const std::string& code, int status, std::string detail) {
  const absl::StatusCode kind = status == 404   ? absl::StatusCode::kNotFound
                                : status == 403 ? absl::StatusCode::kPermissionDenied
                                : status == 409 ? absl::StatusCode::kFailedPrecondition
                                : status == 504 ? absl::StatusCode::kDeadlineExceeded
                                                : absl::StatusCode::kUnavailable;
  return base::ApiError(kind, code, std::move(detail), status);
}

// NyxID's typed refusal as ours: its code in lower case, for the codes of
// the SSH route; anything else is the route being unavailable.
absl::Status RouteError(const NyxidReply& reply) {
  static const std::map<std::string, int> kRouteCodes = {{"NODE_OFFLINE", 503},
                                                         {"SSH_SERVICE_NOT_FOUND", 404},
                                                         {"SSH_PRINCIPAL_NOT_ALLOWED", 403},
                                                         {"SSH_TARGET_NOT_ALLOWED", 403},
                                                         {"SSH_COMMAND_REFUSED", 403},
                                                         {"SSH_KEY_UNAVAILABLE", 409},
                                                         {"SSH_HOST_KEY_MISMATCH", 502},
                                                         {"SSH_AUTH_FAILED", 502},
                                                         {"SSH_CONNECT_FAILED", 502},
                                                         {"NODE_TIMEOUT", 504}};
  const std::string code = base::StringOr(reply.body, "code", "");
  const std::string detail = base::StringOr(reply.body, "detail", "").substr(0, 300);
  if (auto it = kRouteCodes.find(code); it != kRouteCodes.end()) {
    const std::string ours =
        code == "NODE_TIMEOUT" ? "ssh_route_timeout" : absl::AsciiStrToLower(code);
    return SshError(ours, it->second,
                    detail.empty() ? "NyxID's SSH route refused the call" : detail);
  }
  if (code == "ROUTE_INACTIVE" || code == "ROUTE_USE_DENIED" ||
      code == "AGENT_KEY_SERVICE_NOT_ALLOWED" || reply.status == 401 || reply.status == 403) {
    return SshError("ssh_route_denied", 403, "NyxID refused the caller's credential for the route");
  }
  return SshError("ssh_route_unavailable", 502, "NyxID's SSH route is unavailable");
}

}  // namespace

std::chrono::milliseconds PrivateSshExchangeTimeout(int timeout_secs) {
  return std::chrono::seconds(timeout_secs) + kExchangeMargin;
}

absl::StatusOr<json> RunPrivateSsh(const NyxidClient& nyxid, const std::string& credential,
                                   const CodexExecArgs& args,
                                   std::optional<std::chrono::milliseconds> budget) {
  std::chrono::milliseconds timeout = PrivateSshExchangeTimeout(args.timeout_secs);
  if (budget && *budget < timeout) timeout = std::max(std::chrono::milliseconds(1), *budget);
  const json body = {{"principal", args.ssh_principal},
                     {"command", nyxid::AevatarSshCommand(args.timeout_secs)},
                     {"stdin", args.prompt}};
  const NyxidReply reply = nyxid.SshExec(credential, args.ssh_service, body, timeout);
  if (reply.status == 0) {
    return reply.transport == absl::StatusCode::kDeadlineExceeded
               ? SshError("ssh_route_timeout", 504, "NyxID's SSH route did not answer in time")
               : SshError("ssh_route_unavailable", 502, "NyxID cannot be reached");
  }
  if (reply.status != 200) return RouteError(reply);
  // NyxID's answer, read as hostile input: exactly the four fields.
  auto exit_code = base::RequiredInt(reply.body, "exit_code");
  auto timed_out = base::RequiredBool(reply.body, "timed_out");
  auto out = base::RequiredString(reply.body, "stdout");
  auto err = base::RequiredString(reply.body, "stderr");
  if (!exit_code.ok() || !timed_out.ok() || !out.ok() || !err.ok()) {
    return SshError("ssh_route_unavailable", 502, "NyxID's SSH reply is malformed");
  }
  return json{
      {"exit_code", *exit_code}, {"timed_out", *timed_out}, {"stdout", *out}, {"stderr", *err}};
}

}  // namespace aevatar::orchestrator
