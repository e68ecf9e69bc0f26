#ifndef AEVATAR_NYXID_PROXY_UPSTREAM_EXCHANGE_H_
#define AEVATAR_NYXID_PROXY_UPSTREAM_EXCHANGE_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "http/client.h"
#include "http/message.h"

namespace aevatar::nyxid {

// Runs one proxied exchange and turns the upstream answer into the response
// for the caller, streaming bodies that are large or slow.
//
// Theory of operation: the exchange is opened (http::OpenExchange, bounded
// by request.timeout = the proxy deadline; its body waits in a queue of at
// most `queue_limit` bytes, so a slow reader slows the upstream instead of
// filling memory). This thread waits for the upstream status and headers,
// then reads the body until it ends or `buffer_limit` bytes are in:
//   - the body ended below `buffer_limit`: an ordinary response (with
//     Content-Length);
//   - otherwise, and at once for `Content-Type: text/event-stream` (server-
//     sent events, e.g. a model's Responses API stream: the first event is
//     never held back): a streamed response whose `stream` sends what was
//     read and then the rest as it comes. A caller that goes away stops the
//     exchange; so does destroying an unsent response.
// An upstream served in this process (http/in_process.h) needs no thread of
// its own for this: its body is read straight from its handler.
// Statuses without a body (1xx, 204, 304) and HEAD never stream.
//
// Errors before the response is decided are returned, typed for the caller:
//   DeadlineExceeded PROXY_DEADLINE_EXCEEDED (504),
//   Unavailable UPSTREAM_UNREACHABLE (502),
//   UPSTREAM_RESPONSE_INVALID (502) for an oversized or malformed answer.
// Past that point a failure can only cut the stream.
struct ExchangeOptions {
  size_t buffer_limit = 256 << 10;  // answer without streaming up to this size
  size_t queue_limit = 1 << 20;     // bytes held between upstream and caller over TCP
};

absl::StatusOr<http::Response> ProxyExchange(http::ClientRequest request,
                                             const ExchangeOptions& options = {});

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_PROXY_UPSTREAM_EXCHANGE_H_
