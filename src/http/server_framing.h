#ifndef AEVATAR_HTTP_SERVER_FRAMING_H_
#define AEVATAR_HTTP_SERVER_FRAMING_H_

// Private to src/http, included by server.cc only: how a parsed Beast request
// becomes a Request, and a Response becomes HTTP/1.1 framing. Inline in a
// header rather than in its own .cc because every translation unit that
// includes Beast costs ~12 s to compile here.

#include <optional>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "http/beast_private.h"
#include "http/problem.h"
#include "http/request_body.h"
#include "http/server.h"
#include "http/server_common.h"
#include "http/server_state.h"
#include "http/tls.h"

namespace aevatar::http {

// One request/response exchange, shared by a connection's coroutine and the
// handler thread serving it. Fields are written by one side at a time: the
// coroutine before dispatch, the handler thread until it resumes the
// coroutine. `stream` is only dereferenced on the connection's strand.
struct Exchange {
  Request request;
  Response response;
  bool head = false;        // HEAD: send headers only
  bool keep_alive = false;  // the client allows another request on this connection
  bool busy = false;        // the handler pool was full; answer 503
  bool streamed = false;    // the handler thread wrote the response itself
  bool stream_ok = false;   // ... and every write succeeded
  bool handed_off = false;  // a WebSocket session took the connection
  // The connection, plain or TLS, and its entry in the server's list.
  std::variant<beast::tcp_stream*, TlsStream*> stream;
  Registration* registration = nullptr;
};

// Returns the Request for a fully read message from `remote_address`.
inline Request ToRequest(bhttp::request<RequestBody> message, std::string remote_address) {
  Request request;
  request.method = std::string(ToStringView(message.method_string()));
  SetTarget(request, std::string(ToStringView(message.target())));
  CopyFromFields(message, request.headers);
  request.body = std::move(message.body());
  request.remote_address = std::move(remote_address);
  return request;
}

// Returns the message for a buffered response. Handler headers are kept as
// given; the framing fields are computed: Content-Length is the body size for
// a normal body, the handler's (or the body's) length for HEAD, and absent
// when the status has no body.
inline bhttp::response<bhttp::string_body> BuildResponse(const Response& response, bool keep_alive,
                                                         bool head) {
  bhttp::response<bhttp::string_body> message;
  message.version(11);
  message.result(WireStatus(response.status));
  CopyToFields(response.headers, message.base());
  if (StatusHasNoBody(response.status)) {
    // No body, no length.
  } else if (head) {
    std::optional<std::string> declared = response.headers.Get("Content-Length");
    if (!response.body.empty() || !declared) {
      message.set(bhttp::field::content_length, std::to_string(response.body.size()));
    } else if (!UnsafeHeaderText(*declared)) {
      message.set(bhttp::field::content_length, *declared);
    }
  } else {
    message.body() = response.body;
    message.content_length(response.body.size());
  }
  message.keep_alive(keep_alive && !WantsClose(response));
  return message;
}

// Returns the header of a streamed response: chunked unless the status has no
// body. (For HEAD the caller sends this header and no chunks.)
inline bhttp::response<bhttp::empty_body> BuildStreamHeader(const Response& response,
                                                            bool keep_alive) {
  bhttp::response<bhttp::empty_body> message;
  message.version(11);
  message.result(WireStatus(response.status));
  CopyToFields(response.headers, message.base());
  if (!StatusHasNoBody(response.status)) message.chunked(true);
  message.keep_alive(keep_alive && !WantsClose(response));
  return message;
}

// The 503 for a connection past the server's or the process's connection cap.
inline Response TooManyConnectionsResponse() {
  Response response =
      ProblemResponse(base::ApiError(absl::StatusCode::kUnavailable, "TOO_MANY_CONNECTIONS",
                                     "too many open connections; retry shortly"),
                      NewDiagnosticId());
  response.headers.Set("Retry-After", "1");
  return response;
}

// Returns the problem to answer a failed request read with, or nullopt when
// the connection should just close (peer gone, timeout, clean end).
// `request_line_read` tells a header_limit in the request line (414) from one
// in the fields (431).
inline std::optional<Response> ProblemForReadError(const beast::error_code& ec,
                                                   const ServerOptions& options,
                                                   bool request_line_read) {
  if (ec == bhttp::error::body_limit) return BodyTooLargeResponse(options.max_body_bytes);
  if (ec == bhttp::error::header_limit && !request_line_read) {
    return UriTooLongResponse(options.max_header_bytes);
  }
  if (ec == bhttp::error::header_limit) return HeadersTooLargeResponse(options.max_header_bytes);
  bool parse_error = ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category();
  if (parse_error && ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
    return MalformedRequestResponse();
  }
  return std::nullopt;
}

// Returns the problem for a request header whose body framing this server
// does not take: a Transfer-Encoding other than exactly "chunked" (Beast
// would read "chunked, identity" or "gzip" as no body, leaving the real body
// to be parsed as the next request: smuggling through any proxy in front).
// The connection is closed after the answer.
template <class Fields>
std::optional<Response> FramingProblem(const bhttp::request<RequestBody, Fields>& message) {
  auto coding = message.find(bhttp::field::transfer_encoding);
  if (coding == message.end()) return std::nullopt;
  if (message.count(bhttp::field::transfer_encoding) == 1 &&
      beast::iequals(coding->value(), "chunked")) {
    return std::nullopt;
  }
  return ProblemResponse(
      base::ApiError(absl::StatusCode::kInvalidArgument, "TRANSFER_ENCODING_INVALID",
                     "Transfer-Encoding must be exactly chunked when present"),
      NewDiagnosticId());
}

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_SERVER_FRAMING_H_
