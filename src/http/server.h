#ifndef AEVATAR_HTTP_SERVER_H_
#define AEVATAR_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "http/message.h"

namespace aevatar::http {

using Handler = std::function<Response(Request&)>;

// Parses a "HOST:PORT" listen address (port 0..65535; 0 picks a free one).
// InvalidArgument naming the --listen flag otherwise.
absl::StatusOr<std::pair<std::string, uint16_t>> ParseListenAddress(const std::string& listen);

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;                // 0 picks a free port; see Server::port()
  int io_threads = 2;               // threads running the socket I/O
  size_t max_body_bytes = 8 << 20;  // larger requests get 413 BODY_TOO_LARGE
  // Handlers may block (a synchronous /execute waits up to 600 s). Each
  // request's handler runs on its own pooled thread, never on an I/O thread,
  // so slow handlers never hold up other requests. Past this many handlers in
  // flight the server answers 503 SERVER_BUSY at once.
  int max_concurrent_handlers = 512;
  // Time allowed to receive one whole request (headers and body).
  int read_timeout_secs = 30;
};

// An HTTP/1.1 server (keep-alive, chunked streaming) on Boost.Beast.
// Malformed HTTP gets 400, bodies over the limit 413, and a handler that
// throws gets a 500 problem — all as application/problem+json.
class Server {
 public:
  // Binds, starts the I/O threads and returns; requests go to `handler`.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options,
                                                       Handler handler);
  virtual ~Server() = default;
  // The bound port (useful with port 0).
  virtual uint16_t port() const = 0;
  // Stops accepting, closes connections, waits for in-flight handlers up to
  // `grace_secs`, and joins all threads. Idempotent.
  virtual void Stop(int grace_secs = 5) = 0;
};

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_SERVER_H_
