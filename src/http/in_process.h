#ifndef AEVATAR_HTTP_IN_PROCESS_H_
#define AEVATAR_HTTP_IN_PROCESS_H_

// Private to src/http: exchanges with a server of this very process without
// TCP. A server started with ServerOptions::serve_in_process registers here
// under the address it is bound to; Fetch and FetchStreaming then hand a
// plain-http request for exactly that host and port to the server's handler
// directly. What the handler sees and what the caller gets are what the wire
// would give them:
//   - the Request as the server would parse it (target, path, query; header
//     fields the client would write, Host, Content-Length; the remote address
//     is the bound address, as for any loopback peer);
//   - the server's limits: a body past max_body_bytes gets its 413, a request
//     line or header block past max_header_bytes its 414 or 431, and a
//     request past max_concurrent_handlers the 503 SERVER_BUSY, since the
//     handler runs on the server's own HandlerPool;
//   - the client's limits: the whole exchange under `timeout`
//     (DeadlineExceeded, and the handler is told nobody reads any more at its
//     next write), the body under max_response_bytes (ResourceExhausted);
//   - a stopped server is gone from here, so a request falls back to TCP and
//     meets the closed listener.
// TLS (https) is never served here: whoever calls an https URL wants the
// peer's certificate verified, which only the handshake does.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "http/client.h"
#include "http/handler_pool.h"
#include "http/server.h"
#include "http/url.h"

namespace aevatar::http {

// What an exchange needs of a server that serves in process.
struct InProcessPeer {
  Handler handler;
  std::shared_ptr<HandlerPool> pool;
  size_t max_header_bytes = 0;
  size_t max_body_bytes = 0;
  std::atomic<bool> stopping{false};  // set as the server stops: no new exchanges
};

// Makes `peer` the server at `host`:`port` (the IP literal it is bound to)
// for this process's clients, until UnregisterInProcessPeer.
void RegisterInProcessPeer(const std::string& host, uint16_t port,
                           std::shared_ptr<InProcessPeer> peer);
// Forgets the server at `host`:`port` if it is still `peer`.
void UnregisterInProcessPeer(const std::string& host, uint16_t port, const InProcessPeer* peer);
// The server registered at `host`:`port`, or null. Cheap when none is.
std::shared_ptr<InProcessPeer> FindInProcessPeer(const std::string& host, uint16_t port);

// One exchange of `request` (to `url`) with `peer`, on the caller's thread
// while the handler runs on the peer's pool. The callbacks are as for
// FetchStreaming (`on_headers` may be null); errors as for Fetch.
absl::StatusOr<ClientResponse> InProcessExchange(
    const ClientRequest& request, const HttpUrl& url, std::shared_ptr<const InProcessPeer> peer,
    const std::function<void(const ClientResponse&)>* on_headers,
    const std::function<bool(std::string_view chunk)>& on_chunk);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_IN_PROCESS_H_
