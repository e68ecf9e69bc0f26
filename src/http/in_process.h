#ifndef AEVATAR_HTTP_IN_PROCESS_H_
#define AEVATAR_HTTP_IN_PROCESS_H_

// Private to src/http: exchanges with a server of this very process without
// TCP. A server started with ServerOptions::serve_in_process registers here
// under the address it is bound to; Fetch, FetchStreaming and OpenExchange
// then hand a plain-http request for exactly that host and port to the
// server's handler directly. What the handler sees and what the caller gets are what the wire
// would give them:
//   - the Request as the server would parse it (target, path, query; the
//     header fields the client would write, trimmed, Host, Content-Length,
//     Connection; a method or field the parser refuses gets its 400; the
//     remote address is the bound address, as for any loopback peer);
//   - the server's size limits: a body past max_body_bytes gets its 413, a
//     request line or header block past max_header_bytes its 414 or 431, and
//     a request past max_concurrent_handlers the 503 SERVER_BUSY, since the
//     handler runs on the server's own HandlerPool;
//   - the client's limits: the whole exchange under `timeout`
//     (DeadlineExceeded, and the handler is told nobody reads any more at its
//     next write), the answer's header block under 64 KiB and its body under
//     max_response_bytes (ResourceExhausted);
//   - Stop: a stopping server takes no new exchange (503 SERVER_STOPPING),
//     waits for those in flight within its grace, then ends the rest as it
//     closes its connections (Unavailable; the handler's next write fails).
//     A stopped server is gone from here, so a request falls back to TCP and
//     meets the closed listener.
// Connection limits and the read timeouts have nothing to bound here: no
// connection is opened and no byte waits for a slow peer.
// TLS (https) is never served here: whoever calls an https URL wants the
// peer's certificate verified, which only the handshake does. Fetch must not
// run on a thread that entered another network namespace (none does): the
// address it names would be that namespace's.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "http/client.h"
#include "http/handler_pool.h"
#include "http/opened_exchange.h"
#include "http/server.h"
#include "http/url.h"

namespace aevatar::http {

struct InProcessConversation;  // one exchange in flight (in_process.cc)

// What an exchange needs of a server that serves in process.
struct InProcessPeer {
  Handler handler;
  std::shared_ptr<HandlerPool> pool;
  size_t max_header_bytes = 0;
  size_t max_body_bytes = 0;
  absl::Mutex mu;
  bool stopping ABSL_GUARDED_BY(mu) = false;  // no new exchanges
  // The exchanges in flight (the handler not done, the caller still there),
  // so that Stop can wait for them and end them.
  std::set<std::shared_ptr<InProcessConversation>> live ABSL_GUARDED_BY(mu);
};

// Stops `peer` taking exchanges, waits until `deadline` for those in flight
// to end, and ends the rest as a closed connection would.
void StopInProcessPeer(InProcessPeer& peer, std::chrono::steady_clock::time_point deadline);

// Makes `peer` the server at `host`:`port` (the IP literal it is bound to)
// for this process's clients, until UnregisterInProcessPeer.
void RegisterInProcessPeer(const std::string& host, uint16_t port,
                           std::shared_ptr<InProcessPeer> peer);
// Forgets the server at `host`:`port` if it is still `peer`.
void UnregisterInProcessPeer(const std::string& host, uint16_t port, const InProcessPeer* peer);
// The server registered at `host`:`port`, or null. Cheap when none is.
std::shared_ptr<InProcessPeer> FindInProcessPeer(const std::string& host, uint16_t port);

// One exchange of `request` (to `url`) with `peer`, the handler running on
// the peer's pool: returns once the answer's head is in, its body then read
// on whichever thread the caller likes, with no thread of its own. Errors as
// for Fetch.
absl::StatusOr<OpenedExchange> OpenInProcessExchange(const ClientRequest& request,
                                                     const HttpUrl& url,
                                                     std::shared_ptr<InProcessPeer> peer);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_IN_PROCESS_H_
