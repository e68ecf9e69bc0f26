#ifndef AEVATAR_NYXID_NODES_NODE_HUB_H_
#define AEVATAR_NYXID_NODES_NODE_HUB_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "http/websocket.h"
#include "nlohmann/json.hpp"

// The nodes connected to this NyxID now, and the requests relayed to them.
//
// A node keeps one WebSocket open to NyxID (it connects out; nothing
// connects to it). NyxID sends it requests as JSON text messages, each with a
// fresh "request_id", and the node answers each with a message carrying the
// same id. A node is online while its connection is open; a new connection of
// the same node replaces the old one. Messages from a node are hostile
// input: anything that is not an object answering a pending request is
// dropped.
namespace aevatar::nyxid {

class NodeHub {
 public:
  NodeHub() = default;
  NodeHub(const NodeHub&) = delete;
  NodeHub& operator=(const NodeHub&) = delete;

  // Runs node `node_id`'s connection until it ends (on the server's handler
  // thread for the upgrade). Pending requests of the node fail as offline
  // when it ends.
  void Serve(const std::string& node_id, http::WebSocket& socket);

  bool Online(const std::string& node_id) const;

  // Sends `request` (a JSON object; "request_id" is added) to the node and
  // waits for the answer. Unavailable when the node is not connected or its
  // connection ends first; DeadlineExceeded past `timeout`.
  absl::StatusOr<nlohmann::json> Relay(const std::string& node_id, nlohmann::json request,
                                       std::chrono::milliseconds timeout);

  // Ends the node's connection, if any (the node was deleted).
  void Disconnect(const std::string& node_id);

 private:
  struct Connection;

  std::shared_ptr<Connection> Find(const std::string& node_id) const;
  void Forget(const std::string& node_id, const Connection* connection);

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Connection>> connections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_NODES_NODE_HUB_H_
