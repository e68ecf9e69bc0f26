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
// Theory of operation: the exchange (http::FetchStreaming, bounded by
// request.timeout = the proxy deadline) runs on its own thread and hands
// chunks to a bounded queue. This thread waits for the upstream status and
// headers, then for either the end of the body or `buffer_limit` bytes:
//   - the body ended below `buffer_limit`: an ordinary response (with
//     Content-Length);
//   - otherwise, and at once for `Content-Type: text/event-stream` (server-
//     sent events, e.g. a model's Responses API stream: the first event is
//     never held back): a streamed response whose `stream` drains the queue
//     (the exchange thread blocks while the queue is full, so a slow reader
//     slows the upstream instead of filling memory). A caller that goes away
//     stops the exchange; so does destroying an unsent response.
// Statuses without a body (1xx, 204, 304) and HEAD never stream.
//
// Errors before the response is decided are returned, typed for the caller:
//   DeadlineExceeded PROXY_DEADLINE_EXCEEDED (504),
//   Unavailable UPSTREAM_UNREACHABLE (502),
//   UPSTREAM_RESPONSE_INVALID (502) for an oversized or malformed answer.
// Past that point a failure can only cut the stream.
struct ExchangeOptions {
  size_t buffer_limit = 256 << 10;  // answer without streaming up to this size
  size_t queue_limit = 1 << 20;     // bytes held between upstream and caller
};

absl::StatusOr<http::Response> ProxyExchange(http::ClientRequest request,
                                             const ExchangeOptions& options = {});

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_PROXY_UPSTREAM_EXCHANGE_H_
