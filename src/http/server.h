#ifndef AEVATAR_HTTP_SERVER_H_
#define AEVATAR_HTTP_SERVER_H_

#include <chrono>
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

// Limits, which bound what a slow, idle or oversized client can cost. The
// defaults suit the services; tests shorten the timeouts. A breached timeout
// or size limit ends the connection.
//   header_timeout (10 s)  a request's whole header block (request line and
//       fields) must arrive within this, counted from the accept or, on a
//       kept-alive connection, from the request's first byte (slowloris).
//   body_timeout (60 s)    the body must then arrive within this.
//   idle_timeout (30 s)    a kept-alive connection may wait this long for the
//       first byte of its next request.
//   max_header_bytes (32 KiB)  request line plus header fields: a longer
//       request line gets 414 URI_TOO_LONG, longer fields 431
//       HEADERS_TOO_LARGE.
//   max_body_bytes (8 MiB)  a larger Content-Length gets 413 BODY_TOO_LARGE
//       before any body byte is read (a chunked body once it passes the
//       limit). A body is never buffered past the limit, and its memory
//       follows the bytes received, not the length declared.
//   max_connections (16384)  open connections of this server. Past it, or
//       past the process-wide budget (RLIMIT_NOFILE less a reserve; the first
//       Start raises the soft limit to the hard one), a new connection gets
//       503 TOO_MANY_CONNECTIONS and is closed, so the process keeps
//       descriptors to accept and answer /healthz. Idle connections cost no
//       thread (each is a coroutine).
//   max_concurrent_handlers (512)  past it a request gets 503 SERVER_BUSY;
//       the connection stays open.
// TLS for a server's listener. Off while `cert_file` is empty.
struct ServerTls {
  std::string cert_file;  // PEM certificate chain, leaf first
  std::string key_file;   // its private key (PEM)
  // Not empty: mutual TLS. A client must present a certificate that chains to
  // a CA in this PEM file, or the handshake fails before any HTTP is read.
  std::string client_ca_file;
  // Not empty (with client_ca_file): the client certificate must also name
  // this DNS name (subjectAltName), so one CA can sign every service while
  // only the named one may call (e.g. chrono-sandbox takes only NyxID).
  std::string client_name;

  bool enabled() const { return !cert_file.empty(); }
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0 picks a free port; see Server::port()
  // An IPv4 TCP socket that is already bound and listening (e.g. one made in
  // another network namespace, os::MakeNetnsListener) to serve instead of
  // binding host:port, which are then ignored. Start takes ownership
  // whether or not it succeeds (the server, or a failed Start, closes it).
  int listen_fd = -1;
  int io_threads = 2;  // threads running the socket I/O
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds body_timeout{60'000};
  std::chrono::milliseconds idle_timeout{30'000};
  size_t max_header_bytes = 32 << 10;  // room for bearer and delegation tokens
  size_t max_body_bytes = 8 << 20;
  int max_connections = 16384;
  // Handlers may block (a synchronous /execute waits up to 600 s). Each
  // request's handler runs on its own pooled thread, never on an I/O thread,
  // so slow handlers never hold up other requests. Past this many handlers in
  // flight the server answers 503 SERVER_BUSY at once.
  int max_concurrent_handlers = 512;
  // With TLS on, every connection completes a TLS 1.2+ handshake within
  // header_timeout before its first request is read; keep-alive, streaming
  // and WebSocket upgrades work as over plain TCP. A connection past the cap
  // is closed without an answer (a plaintext 503 means nothing to a TLS
  // client, and a handshake would spend the CPU shedding saves).
  ServerTls tls;
  // Also serve this process's own http:// requests to host:port (the bound
  // address as given, "localhost" as 127.0.0.1) without TCP: http::Fetch
  // hands them to `handler` on this server's handler threads, under its
  // size limits and handler bound and the caller's deadline (in_process.h).
  // For services that run in one process (`aevatar up`). Ignored with
  // `listen_fd` (its address may be another network namespace's), with TLS,
  // for a wildcard host (0.0.0.0, ::) and when Start runs on a thread in
  // another network namespace.
  bool serve_in_process = false;
};

// An HTTP/1.1 server (keep-alive, chunked streaming; optionally over TLS) on
// Boost.Beast.
// Malformed HTTP gets 400, requests past a limit 413/414/431, connections past
// the cap 503, and a handler that throws gets a 500 problem — all as
// application/problem+json.
class Server {
 public:
  // Binds, starts the I/O threads and returns; requests go to `handler`.
  // InvalidArgument when a TLS file cannot be loaded.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options,
                                                       Handler handler);
  virtual ~Server() = default;
  // The bound port (useful with port 0).
  virtual uint16_t port() const = 0;
  // Connections open now (accepted, not yet closed, not shed). Thread-safe.
  virtual int open_connections() const = 0;
  // Stops accepting, closes connections, waits for in-flight handlers up to
  // `grace_secs`, and joins all threads. Idempotent.
  virtual void Stop(int grace_secs = 5) = 0;
};

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_SERVER_H_
