#ifndef AEVATAR_HTTP_WEBSOCKET_H_
#define AEVATAR_HTTP_WEBSOCKET_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "http/client.h"
#include "http/message.h"

// WebSocket connections carrying text messages (RFC 6455), for a peer that
// connects out and then takes requests over the one connection (NyxID's
// nodes). No Boost here; websocket_channel.h is the implementation.
namespace aevatar::http {

// One open connection, from either side. Read and Write may run at the same
// time on different threads; writes are serialized. Both sides ping an idle
// connection and end it when the peer stops answering (`idle_timeout`).
class WebSocket {
 public:
  virtual ~WebSocket() = default;
  // Blocks until the next text message. Unavailable once the connection
  // ended (closed by either side, idle past the timeout, the server
  // stopping); ResourceExhausted for a message past the size limit (the
  // connection is then closed).
  virtual absl::StatusOr<std::string> Read() = 0;
  // Sends one text message; false once the connection is gone.
  virtual bool Write(std::string_view message) = 0;
  // Ends the connection; a blocked Read returns. Idempotent, thread-safe.
  virtual void Close() = 0;
};

struct WebSocketOptions {
  size_t max_message_bytes = 8 << 20;
  // With no frame from the peer for half of this a ping goes out; with none
  // for all of it the connection ends.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(30)};
};

// The server side: a handler answering an upgrade request returns this. The
// server completes the upgrade (or answers 400 when the request is not a
// WebSocket upgrade) and runs `session` on the handler's thread; the
// connection ends when it returns.
using WebSocketSession = std::function<void(WebSocket& socket)>;
struct WebSocketUpgradeSpec {
  WebSocketSession session;
  WebSocketOptions options;
};
Response WebSocketUpgrade(WebSocketSession session, WebSocketOptions options = {});

// True when `request` asks for a WebSocket upgrade.
bool IsWebSocketUpgrade(const Request& request);

// The client side: connects to "ws://host:port/path" or "wss://…" (TLS,
// verified as ClientTls says) and completes the upgrade with `headers` (e.g.
// Authorization) within `connect_timeout`. InvalidArgument for another
// scheme or unusable `tls` files, Unavailable when the connection, the TLS
// handshake or the upgrade fails (the message names the status the server
// answered instead, e.g. 401), DeadlineExceeded past the timeout.
absl::StatusOr<std::unique_ptr<WebSocket>> ConnectWebSocket(
    const std::string& url, const Headers& headers, std::chrono::milliseconds connect_timeout,
    WebSocketOptions options = {}, const ClientTls& tls = {});

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_WEBSOCKET_H_
