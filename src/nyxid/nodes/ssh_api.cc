// SSH services: private UserServices bound to one of the owner's nodes, and
// the route that relays the Aevatar command profile to that node.
//
//   POST /api/v1/ssh-services {label, host, port, node_id, principals}
//   POST /api/v1/ssh/{service}/exec {principal, command, stdin}
//
// The route's answer is the node's raw SSH result:
//   {"exit_code": int, "timed_out": bool, "stdout": str, "stderr": str}.
// The private key stays on the node; NyxID never sees it. Only a human
// access token or an Agent Key restricted to the service may run it
// (route_access.h CheckSshCredential). Every refusal is typed: NODE_OFFLINE, SSH_SERVICE_NOT_FOUND,
// SSH_PRINCIPAL_NOT_ALLOWED, SSH_COMMAND_REFUSED, and the node's own SSH_TARGET_NOT_ALLOWED,
// SSH_KEY_UNAVAILABLE, SSH_HOST_KEY_MISMATCH, SSH_AUTH_FAILED, SSH_CONNECT_FAILED.
#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "base/log.h"
#include "nyxid/api/admin_audit.h"
#include "nyxid/api/api_support.h"
#include "nyxid/nodes/node_hub.h"
#include "nyxid/nodes/node_store.h"
#include "nyxid/nodes/ssh_command_profile.h"
#include "nyxid/routes/route_access.h"
#include "nyxid/routes/route_ops.h"

namespace aevatar::nyxid {
namespace {

using nlohmann::json;

// The node gets the run's timeout plus this for connecting and the
// wrapper's own kill grace (timeout --kill-after=10).
constexpr std::chrono::seconds kRelayMargin{30};
constexpr size_t kMaxPrincipals = 16;

absl::Status Bad(std::string code, std::string detail) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, std::move(code), std::move(detail),
                        400);
}

absl::Status ServiceNotFound() {
  return base::ApiError(absl::StatusCode::kNotFound, "SSH_SERVICE_NOT_FOUND",
                        "no such SSH service for this caller", 404);
}

bool IsPrincipal(const std::string& name) {
  return !name.empty() && name.size() <= 32 && (absl::ascii_islower(name[0]) || name[0] == '_') &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos;
}

bool IsHost(const std::string& host) {
  return !host.empty() && host.size() <= 253 &&
         host.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") ==
             std::string::npos &&
         host.front() != '-';
}

// The label as a slug: lower case, runs of other characters as one '-'.
std::string SlugFromLabel(const std::string& label) {
  std::string slug;
  for (char c : absl::AsciiStrToLower(label)) {
    const bool keep = absl::ascii_isalnum(static_cast<unsigned char>(c));
    if (keep) {
      slug += c;
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.substr(0, 63);
}

struct AddSshRequest {
  std::string label;
  std::string host;
  int port = 22;
  std::string node_id;
  std::vector<std::string> principals;
};

absl::StatusOr<AddSshRequest> ParseAddSsh(const json& body) {
  AddSshRequest out;
  auto label = base::RequiredString(body, "label");
  if (!label.ok() || label->empty() || label->size() > 63) {
    return Bad("SSH_SERVICE_INVALID", "label must be 1 to 63 characters");
  }
  out.label = *label;
  auto host = base::RequiredString(body, "host");
  if (!host.ok() || !IsHost(*host)) {
    return Bad("SSH_SERVICE_INVALID", "host must be a host name or IP address");
  }
  out.host = *host;
  auto port = base::OptionalInt(body, "port");
  if (!port.ok() || (*port && (**port < 1 || **port > 65535))) {
    return Bad("SSH_SERVICE_INVALID", "port must be an integer 1..65535");
  }
  if (*port) out.port = static_cast<int>(**port);
  auto node_id = base::RequiredString(body, "node_id");
  if (!node_id.ok() || node_id->empty()) return Bad("SSH_SERVICE_INVALID", "node_id is required");
  out.node_id = *node_id;
  auto principals = base::RequiredArray(body, "principals");
  if (!principals.ok() || (*principals)->empty() || (*principals)->size() > kMaxPrincipals) {
    return Bad("SSH_SERVICE_INVALID", "principals must be 1 to 16 Unix user names");
  }
  for (const json& principal : **principals) {
    if (!principal.is_string() || !IsPrincipal(principal.get<std::string>())) {
      return Bad("SSH_SERVICE_INVALID", "each principal must be a Unix user name");
    }
    out.principals.push_back(principal.get<std::string>());
  }
  if (base::BoolOr(body, "node_key", true) != true) {
    return Bad("SSH_SERVICE_INVALID", "only node-held keys are supported (node_key: true)");
  }
  return out;
}

json SshServiceJson(const UserService& route, const SshTarget& target) {
  return {{"id", route.id},
          {"slug", route.slug},
          {"label", route.label},
          {"kind", "ssh"},
          {"node_id", *route.node_id},
          {"host", target.host},
          {"port", target.port},
          {"principals", target.principals},
          {"key_holder", "node"},
          {"active", route.active}};
}

// The caller's SSH service by slug or id: visible, usable, active, node-bound.
absl::StatusOr<std::pair<UserService, SshTarget>> ResolveSshService(const HttpApiDeps& deps,
                                                                    const Principal& caller,
                                                                    const std::string& service) {
  absl::StatusOr<UserService> route = deps.store->FindUserService(service);
  if (absl::IsNotFound(route.status())) {
    route = absl::NotFoundError("");
    for (const Owner& owner : VisibleOwners(caller)) {
      route = deps.store->FindUserServiceBySlug(owner, service);
      if (!absl::IsNotFound(route.status())) break;
    }
  }
  if (absl::IsNotFound(route.status())) return ServiceNotFound();
  if (!route.ok()) return route.status();
  if (!CanSee(caller, *route) || !route->node_id) return ServiceNotFound();
  auto target = deps.nodes->FindSshTarget(route->id);
  if (absl::IsNotFound(target.status())) return ServiceNotFound();
  if (!target.ok()) return target.status();
  if (!route->active) return base::Forbidden("ROUTE_INACTIVE", "the SSH service is not active");
  if (absl::Status st = CheckUsable(caller, *route); !st.ok()) return st;
  if (absl::Status st = CheckSshCredential(caller, *route); !st.ok()) return st;
  return std::make_pair(std::move(*route), std::move(*target));
}

// The node's answer, read as hostile input.
absl::StatusOr<json> NodeAnswer(const json& answer) {
  const absl::Status invalid =
      base::ApiError(absl::StatusCode::kUnavailable, "NODE_RESPONSE_INVALID",
                     "the node's answer breaks the protocol", 502);
  const std::string type = base::StringOr(answer, "type", "");
  if (type == "ssh_error") {
    static const std::set<std::string> kNodeCodes = {
        "SSH_TARGET_NOT_ALLOWED", "SSH_KEY_UNAVAILABLE", "SSH_HOST_KEY_MISMATCH",
        "SSH_CONNECT_FAILED",     "SSH_COMMAND_REFUSED", "SSH_AUTH_FAILED"};
    const std::string code = base::StringOr(answer, "code", "");
    if (kNodeCodes.count(code) == 0) return invalid;
    std::string detail = base::StringOr(answer, "detail", "the node refused the request");
    detail = detail.substr(0, 300);
    const int status = code == "SSH_TARGET_NOT_ALLOWED" || code == "SSH_COMMAND_REFUSED" ? 403
                       : code == "SSH_KEY_UNAVAILABLE"                                   ? 409
                                                                                         : 502;
    return base::ApiError(
        status == 502 ? absl::StatusCode::kUnavailable : absl::StatusCode::kFailedPrecondition,
        code, detail, status);
  }
  if (type != "ssh_result") return invalid;
  auto exit_code = base::RequiredInt(answer, "exit_code");
  auto timed_out = base::RequiredBool(answer, "timed_out");
  auto out = base::RequiredString(answer, "stdout");
  auto err = base::RequiredString(answer, "stderr");
  if (!exit_code.ok() || !timed_out.ok() || !out.ok() || !err.ok()) return invalid;
  return json{
      {"exit_code", *exit_code}, {"timed_out", *timed_out}, {"stdout", *out}, {"stderr", *err}};
}

}  // namespace

http::Response HandleAddSshService(const HttpApiDeps& deps, http::Request& request,
                                   RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireHumanToken(*caller); !st.ok()) return Problem(st, note);
  auto body = JsonObjectBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  auto add = ParseAddSsh(*body);
  if (!add.ok()) return Problem(add.status(), note);
  auto node = deps.nodes->FindNode(add->node_id);
  if (!node.ok() || node->user_id != caller->user.id) {
    return Problem(base::ApiError(absl::StatusCode::kNotFound, "NODE_NOT_FOUND",
                                  "no such node for this user", 404),
                   note);
  }
  const std::string slug = SlugFromLabel(add->label);
  if (!IsValidSlug(slug)) return Problem(Bad("SSH_SERVICE_INVALID", "label makes no slug"), note);
  const int64_t now_ms = base::NowUnixMs();
  UserService route;
  route.id = base::RandomId("us_");
  route.slug = slug;
  route.label = add->label;
  route.owner = {OwnerKind::kUser, caller->user.id};
  route.node_id = node->id;
  route.base_url = "ssh://" + add->host + ":" + std::to_string(add->port);
  route.created_at_ms = route.updated_at_ms = now_ms;
  // The target first: a service row never exists without one.
  const SshTarget target{route.id, add->host, add->port, add->principals};
  if (absl::Status st = deps.nodes->PutSshTarget(target); !st.ok()) return Problem(st, note);
  if (absl::Status st = deps.store->InsertUserService(route); absl::IsAlreadyExists(st)) {
    return Problem(base::ApiError(absl::StatusCode::kAlreadyExists, "USER_SERVICE_CONFLICT",
                                  "you already have a service with this slug or label", 409),
                   note);
  } else if (!st.ok()) {
    return Problem(st, note);
  }
  RecordAdminAction(*deps.store, caller->user.id, "route.created", "user_service", route.id,
                    {{"slug", route.slug},
                     {"kind", "ssh"},
                     {"node_id", node->id},
                     {"principals", target.principals}});
  return Json(201, SshServiceJson(route, target));
}

http::Response HandleSshExec(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto body = JsonObjectBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  auto principal = base::RequiredString(*body, "principal");
  auto command = base::RequiredString(*body, "command");
  auto stdin_text = base::OptionalString(*body, "stdin");
  if (!principal.ok() || !command.ok() || !stdin_text.ok()) {
    return Problem(Bad("SSH_EXEC_INVALID",
                       "principal and command (strings) are required; "
                       "stdin is an optional string"),
                   note);
  }
  const std::string input = stdin_text->value_or("");
  if (input.size() > kMaxSshStdinBytes) {
    return Problem(Bad("SSH_EXEC_INVALID", "stdin is larger than 1 MiB"), note);
  }
  auto service = ResolveSshService(deps, *caller, request.path_params["service"]);
  if (!service.ok()) return Problem(service.status(), note);
  const auto& [route, target] = *service;
  std::optional<int> timeout_secs = ParseAevatarSshCommand(*command);
  if (!timeout_secs) {
    http::Response refused =
        Problem(base::Forbidden("SSH_COMMAND_REFUSED",
                                "this route runs only the Aevatar command profile: "
                                "aevatar-codex-exec v1 --timeout-secs N (1..3600)"),
                note);
    // Logged without the command's text: it is the caller's data.
    base::Log(base::LogLevel::kWarn, "nyxid.ssh_command_refused", note.diagnostic_id,
              {{"diagnostic_id", note.diagnostic_id}, {"command_bytes", command->size()}});
    return refused;
  }
  if (std::find(target.principals.begin(), target.principals.end(), *principal) ==
      target.principals.end()) {
    return Problem(base::Forbidden("SSH_PRINCIPAL_NOT_ALLOWED",
                                   "the principal is not one of this SSH service's principals"),
                   note);
  }
  json relay = {{"type", "ssh_exec"},
                {"service", {{"id", route.id}, {"slug", route.slug}}},
                {"host", target.host},
                {"port", target.port},
                {"principal", *principal},
                {"command", *command},
                {"timeout_secs", *timeout_secs},
                {"stdin", input}};
  auto answer = deps.hub->Relay(*route.node_id, std::move(relay),
                                std::chrono::seconds(*timeout_secs) + kRelayMargin);
  if (absl::IsDeadlineExceeded(answer.status())) {
    return Problem(base::ApiError(absl::StatusCode::kDeadlineExceeded, "NODE_TIMEOUT",
                                  "the node did not answer within the command's timeout", 504),
                   note);
  }
  if (!answer.ok()) {
    return Problem(base::ApiError(absl::StatusCode::kUnavailable, "NODE_OFFLINE",
                                  "the SSH service's node is not connected to NyxID", 503),
                   note);
  }
  auto result = NodeAnswer(*answer);
  if (!result.ok()) return Problem(result.status(), note);
  return Json(200, *result);
}

}  // namespace aevatar::nyxid
