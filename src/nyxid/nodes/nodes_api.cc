// Nodes: a user's own machines that connect out to NyxID over a WebSocket
// and relay that user's SSH services (docs/private-ssh.md).
//
//   POST   /api/v1/nodes/register-token {name}  a one-time token (human token)
//   POST   /api/v1/nodes/register {token}       the node's id and secret, once
//   GET    /api/v1/nodes                        the caller's nodes, online or not
//   DELETE /api/v1/nodes/{id}                   its secret stops working
//   GET    /api/v1/nodes/ws                     the node's connection (its secret)
#include "absl/strings/match.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "base/log.h"
#include "http/websocket.h"
#include "nyxid/api/admin_audit.h"
#include "nyxid/api/api_support.h"
#include "nyxid/nodes/node_hub.h"
#include "nyxid/nodes/node_store.h"
#include "nyxid/routes/route_access.h"

namespace aevatar::nyxid {
namespace {

constexpr int64_t kRegistrationTokenTtlMs = 10 * 60 * 1000;
constexpr char kRegistrationTokenPrefix[] = "nyxid_nrt_";
constexpr char kNodeSecretPrefix[] = "nyxid_node_";
constexpr size_t kMaxNodeNameBytes = 64;

absl::Status NodeNotFound() {
  return base::ApiError(absl::StatusCode::kNotFound, "NODE_NOT_FOUND", "no such node", 404);
}

bool IsNodeName(const std::string& name) {
  return !name.empty() && name.size() <= kMaxNodeNameBytes &&
         name.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") ==
             std::string::npos;
}

std::string NewSecret(const char* prefix) {
  return prefix + base::HexEncode(base::RandomBytes(32));
}

nlohmann::json NodeJson(const NodeRecord& node, bool online) {
  return {{"id", node.id},
          {"name", node.name},
          {"status", online ? "online" : "offline"},
          {"created_at_ms", node.created_at_ms},
          {"last_seen_ms", node.last_seen_ms}};
}

}  // namespace

http::Response HandleNodeRegisterToken(const HttpApiDeps& deps, http::Request& request,
                                       RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireHumanToken(*caller); !st.ok()) return Problem(st, note);
  auto body = JsonObjectBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  auto name = base::RequiredString(*body, "name");
  if (!name.ok() || !IsNodeName(*name)) {
    return Problem(base::ApiError(absl::StatusCode::kInvalidArgument, "NODE_NAME_INVALID",
                                  "name must be 1 to 64 characters of [A-Za-z0-9._-]", 400),
                   note);
  }
  const std::string token = NewSecret(kRegistrationTokenPrefix);
  const int64_t expires_at_ms = base::NowUnixMs() + kRegistrationTokenTtlMs;
  if (absl::Status st =
          deps.nodes->InsertToken({base::Sha256Hex(token), caller->user.id, *name, expires_at_ms});
      !st.ok()) {
    return Problem(st, note);
  }
  return NoStore(Json(201, {{"token", token}, {"name", *name}, {"expires_at_ms", expires_at_ms}}));
}

http::Response HandleNodeRegister(const HttpApiDeps& deps, http::Request& request,
                                  RequestNote& note) {
  auto body = JsonObjectBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  const std::string token = base::StringOr(*body, "token", "");
  const absl::Status refused =
      base::ApiError(absl::StatusCode::kUnauthenticated, "REGISTRATION_TOKEN_INVALID",
                     "the registration token is unknown, expired or already used", 401);
  if (!absl::StartsWith(token, kRegistrationTokenPrefix)) return Problem(refused, note);
  const int64_t now_ms = base::NowUnixMs();
  auto consumed = deps.nodes->ConsumeToken(base::Sha256Hex(token), now_ms);
  if (absl::IsNotFound(consumed.status())) return Problem(refused, note);
  if (!consumed.ok()) return Problem(consumed.status(), note);
  const std::string secret = NewSecret(kNodeSecretPrefix);
  NodeRecord node{base::RandomId("node_"),
                  consumed->user_id,
                  consumed->node_name,
                  base::Sha256Hex(secret),
                  now_ms,
                  now_ms};
  if (absl::Status st = deps.nodes->InsertNode(node); absl::IsAlreadyExists(st)) {
    return Problem(base::ApiError(absl::StatusCode::kAlreadyExists, "NODE_NAME_TAKEN",
                                  "this user already has a node of that name", 409),
                   note);
  } else if (!st.ok()) {
    return Problem(st, note);
  }
  base::Log(base::LogLevel::kInfo, "nyxid.node_registered", "", {{"node_id", node.id}});
  RecordAdminAction(*deps.store, node.user_id, "node.registered", "node", node.id,
                    {{"name", node.name}});
  return NoStore(Json(201, {{"node_id", node.id}, {"name", node.name}, {"node_secret", secret}}));
}

http::Response HandleListNodes(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireAccountRead(*caller); !st.ok()) return Problem(st, note);
  auto nodes = deps.nodes->ListNodes(caller->user.id);
  if (!nodes.ok()) return Problem(nodes.status(), note);
  nlohmann::json out = nlohmann::json::array();
  for (const NodeRecord& node : *nodes) out.push_back(NodeJson(node, deps.hub->Online(node.id)));
  return Json(200, {{"nodes", out}});
}

http::Response HandleDeleteNode(const HttpApiDeps& deps, http::Request& request,
                                RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireHumanToken(*caller); !st.ok()) return Problem(st, note);
  const std::string& id = request.path_params["id"];
  if (absl::Status st = deps.nodes->DeleteNode(caller->user.id, id); absl::IsNotFound(st)) {
    return Problem(NodeNotFound(), note);
  } else if (!st.ok()) {
    return Problem(st, note);
  }
  deps.hub->Disconnect(id);
  RecordAdminAction(*deps.store, caller->user.id, "node.deleted", "node", id);
  return http::Response{204, {}, "", nullptr, nullptr};
}

// The node's own connection: its secret as the bearer, then the upgrade.
http::Response HandleNodeSocket(const HttpApiDeps& deps, http::Request& request,
                                RequestNote& note) {
  const std::string secret = http::BearerToken(request).value_or("");
  auto node = absl::StartsWith(secret, kNodeSecretPrefix)
                  ? deps.nodes->FindNodeBySecretHash(base::Sha256Hex(secret))
                  : absl::StatusOr<NodeRecord>(absl::NotFoundError("not a node secret"));
  if (!node.ok()) {
    return Problem(base::ApiError(absl::StatusCode::kUnauthenticated, "NODE_CREDENTIAL_INVALID",
                                  "a registered node's secret is required", 401),
                   note);
  }
  note.credential_kind = "NodeSecret";
  NodeStore* store = deps.nodes;
  NodeHub* hub = deps.hub;
  return http::WebSocketUpgrade([store, hub, node = *node](http::WebSocket& socket) {
    (void)store->TouchNode(node.id, base::NowUnixMs());
    base::Log(base::LogLevel::kInfo, "nyxid.node_connected", "", {{"node_id", node.id}});
    if (socket.Write(nlohmann::json{{"type", "welcome"}, {"node_id", node.id}}.dump())) {
      hub->Serve(node.id, socket);
    }
    (void)store->TouchNode(node.id, base::NowUnixMs());
    base::Log(base::LogLevel::kInfo, "nyxid.node_disconnected", "", {{"node_id", node.id}});
  });
}

}  // namespace aevatar::nyxid
