#include "nyxid/nodes/node_hub.h"

#include <optional>

#include "absl/time/time.h"
#include "base/crypto.h"
#include "base/json_read.h"

namespace aevatar::nyxid {
namespace {

bool CloseSocket(http::WebSocket& socket) {
  socket.Close();
  return true;
}

}  // namespace

// One node's open connection and the requests waiting for its answers.
struct NodeHub::Connection {
  explicit Connection(http::WebSocket& s) : socket(s) {}

  // An answer arrived for a pending request, or the connection ended.
  bool Settled(const std::string* request_id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return closed || answers.count(*request_id) > 0;
  }

  bool Unused() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return users == 0; }

  // Runs `use(socket)` unless the connection has ended; Serve, which owns
  // the socket, waits for these calls before it returns.
  template <typename Use>
  bool WithSocket(Use use) {
    {
      absl::MutexLock lock(&mu);
      if (closed) return false;
      ++users;
    }
    const bool ok = use(socket);
    absl::MutexLock lock(&mu);
    --users;
    return ok;
  }

  http::WebSocket& socket;
  absl::Mutex mu;
  absl::CondVar changed;  // an answer arrived or the connection ended
  bool closed ABSL_GUARDED_BY(mu) = false;
  int users ABSL_GUARDED_BY(mu) = 0;
  std::map<std::string, bool> waiting ABSL_GUARDED_BY(mu);  // request ids still wanted
  std::map<std::string, nlohmann::json> answers ABSL_GUARDED_BY(mu);
};

void NodeHub::Serve(const std::string& node_id, http::WebSocket& socket) {
  auto connection = std::make_shared<Connection>(socket);
  std::shared_ptr<Connection> replaced;
  {
    absl::MutexLock lock(&mu_);
    replaced = std::exchange(connections_[node_id], connection);
  }
  if (replaced) replaced->WithSocket(CloseSocket);
  while (true) {
    absl::StatusOr<std::string> message = socket.Read();
    if (!message.ok()) break;
    auto answer = base::ParseJsonObject(*message);
    if (!answer.ok()) continue;
    const std::string request_id = base::StringOr(*answer, "request_id", "");
    absl::MutexLock lock(&connection->mu);
    if (connection->waiting.erase(request_id) == 1) {
      connection->answers[request_id] = std::move(*answer);
      connection->changed.SignalAll();
    }
  }
  Forget(node_id, connection.get());
  absl::MutexLock lock(&connection->mu);
  connection->closed = true;
  connection->changed.SignalAll();
  connection->mu.Await(absl::Condition(connection.get(), &Connection::Unused));
}

bool NodeHub::Online(const std::string& node_id) const { return Find(node_id) != nullptr; }

absl::StatusOr<nlohmann::json> NodeHub::Relay(const std::string& node_id, nlohmann::json request,
                                              std::chrono::milliseconds timeout) {
  std::shared_ptr<Connection> connection = Find(node_id);
  if (!connection) return absl::UnavailableError("the node is not connected");
  const std::string request_id = base::RandomId("rq_");
  request["request_id"] = request_id;
  {
    absl::MutexLock lock(&connection->mu);
    if (connection->closed) return absl::UnavailableError("the node is not connected");
    connection->waiting[request_id] = true;
  }
  const std::string message =
      request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!connection->WithSocket([&](http::WebSocket& socket) { return socket.Write(message); })) {
    absl::MutexLock lock(&connection->mu);
    connection->waiting.erase(request_id);
    return absl::UnavailableError("the node's connection ended");
  }
  absl::MutexLock lock(&connection->mu);
  const absl::Time deadline = absl::Now() + absl::FromChrono(timeout);
  bool settled = connection->Settled(&request_id);
  while (!settled && absl::Now() < deadline) {
    connection->changed.WaitWithDeadline(&connection->mu, deadline);
    settled = connection->Settled(&request_id);
  }
  connection->waiting.erase(request_id);
  auto answer = connection->answers.extract(request_id);
  if (!answer.empty()) return std::move(answer.mapped());
  if (!settled) return absl::DeadlineExceededError("the node did not answer in time");
  return absl::UnavailableError("the node's connection ended before it answered");
}

void NodeHub::Disconnect(const std::string& node_id) {
  if (std::shared_ptr<Connection> connection = Find(node_id)) connection->WithSocket(CloseSocket);
}

std::shared_ptr<NodeHub::Connection> NodeHub::Find(const std::string& node_id) const {
  absl::MutexLock lock(&mu_);
  auto it = connections_.find(node_id);
  return it == connections_.end() ? nullptr : it->second;
}

void NodeHub::Forget(const std::string& node_id, const Connection* connection) {
  absl::MutexLock lock(&mu_);
  auto it = connections_.find(node_id);
  if (it != connections_.end() && it->second.get() == connection) connections_.erase(it);
}

}  // namespace aevatar::nyxid
