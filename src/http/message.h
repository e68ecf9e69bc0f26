#ifndef AEVATAR_HTTP_MESSAGE_H_
#define AEVATAR_HTTP_MESSAGE_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Plain HTTP message types shared by the server, the client and every service.
// No Boost here: only src/http/*.cc include Boost.Beast.
namespace aevatar::http {

struct WebSocketUpgradeSpec;  // websocket.h

// Header fields in arrival order; lookups are case-insensitive.
class Headers {
 public:
  // Returns the first value of `name`, if any.
  std::optional<std::string> Get(std::string_view name) const;
  // Appends a field (several fields may share a name).
  void Add(std::string name, std::string value);
  // Replaces every field named `name` with one.
  void Set(std::string name, std::string value);
  void Remove(std::string_view name);
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

struct Request {
  std::string method;  // "GET", "POST", …
  std::string target;  // as received: path plus query, e.g. "/executions/op_1?x=1"
  std::string path;    // percent-decoded path without the query
  std::string query;   // raw query string without '?', "" when none
  Headers headers;
  std::string body;
  std::string remote_address;  // peer IP, for logs and rate limits
  // Filled by the Router: values of {name} segments of the matched pattern.
  std::map<std::string, std::string> path_params;

  // Returns the percent-decoded value of query parameter `name`, if present.
  std::optional<std::string> QueryParam(std::string_view name) const;
};

// Writes one chunk of a streamed body; returns false once the peer is gone.
// Blocks until the chunk is handed to the socket.
using ChunkWriter = std::function<bool(std::string_view chunk)>;

struct Response {
  int status = 200;
  Headers headers;
  std::string body;
  // When set, the body is streamed instead: the server sends the status and
  // headers, then calls this on the handler's thread with a writer, using
  // chunked transfer encoding (server-sent events, large proxied bodies).
  std::function<void(const ChunkWriter& write)> stream;
  // When set, the request was a WebSocket upgrade the server completes and
  // hands to a session (websocket.h: WebSocketUpgrade).
  std::shared_ptr<const WebSocketUpgradeSpec> websocket;
};

// Returns the credential of an "Authorization: Bearer <credential>" header
// (scheme matched case-insensitively), or nullopt when there is none.
std::optional<std::string> BearerToken(const Request& request);

// Returns a response with `body` as application/json.
Response JsonResponse(int status, std::string body);

// Parses "a=1&b=x%20y" style strings; later duplicates are ignored.
std::map<std::string, std::string> ParseQuery(std::string_view query);
std::string PercentDecode(std::string_view text);
std::string PercentEncode(std::string_view text);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_MESSAGE_H_
