#ifndef AEVATAR_HTTP_SERVER_COMMON_H_
#define AEVATAR_HTTP_SERVER_COMMON_H_

// Private to src/http: what serving a request over TCP (server.cc) and in
// process (in_process.cc) share, so a handler sees the same Request and a
// caller gets the same problems either way. No Beast here: in_process.cc
// must compile fast.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/log.h"
#include "http/message.h"
#include "http/problem.h"
#include "http/server.h"

namespace aevatar::http {

// Sets `request`'s target as received and its path (percent-decoded) and
// query.
inline void SetTarget(Request& request, std::string target) {
  request.target = std::move(target);
  std::string_view view = request.target;
  size_t question = view.find('?');
  request.path = PercentDecode(view.substr(0, question));
  request.query = question == std::string_view::npos ? "" : std::string(view.substr(question + 1));
}

// Runs the handler; an exception becomes a 500 problem and one log line.
inline Response CallHandler(const Handler& handler, Request& request) {
  const char* type = "unknown";
  try {
    return handler(request);
  } catch (const std::exception& e) {
    type = typeid(e).name();  // the message may quote request data: log the type only
  } catch (...) {
  }
  std::string diagnostic_id = NewDiagnosticId();
  base::Log(base::LogLevel::kError, "http_handler_threw", diagnostic_id,
            {{"method", request.method}, {"exception", type}});
  return ProblemResponse(
      base::ApiError(absl::StatusCode::kInternal, "INTERNAL", "the request handler failed"),
      diagnostic_id);
}

// 1xx, 204 and 304 never carry a body (RFC 9110 §6.4.1).
inline bool StatusHasNoBody(int status) { return status < 200 || status == 204 || status == 304; }

// The 503 for a request that found every handler thread busy.
inline Response BusyResponse() {
  Response response = ProblemResponse(base::ApiError(absl::StatusCode::kUnavailable, "SERVER_BUSY",
                                                     "too many requests in flight; retry shortly"),
                                      NewDiagnosticId());
  response.headers.Set("Retry-After", "1");
  return response;
}

// The 503 for a request read after Stop() began.
inline Response StoppingResponse() {
  return ProblemResponse(base::ApiError(absl::StatusCode::kUnavailable, "SERVER_STOPPING",
                                        "the server is shutting down"),
                         NewDiagnosticId());
}

// The 400 for a handler that answered an ordinary request with a WebSocket.
inline Response WebSocketRequiredResponse() {
  return ProblemResponse(
      base::ApiError(absl::StatusCode::kInvalidArgument, "WEBSOCKET_UPGRADE_REQUIRED",
                     "this endpoint takes a WebSocket upgrade", 400),
      NewDiagnosticId());
}

// A status the wire can carry: three digits, else 500.
inline unsigned WireStatus(int status) {
  return status >= 100 && status <= 999 ? static_cast<unsigned>(status) : 500u;
}

// True when the handler asked to end the connection after this response.
inline bool WantsClose(const Response& response) {
  std::optional<std::string> connection = response.headers.Get("Connection");
  return connection && absl::AsciiStrToLower(*connection).find("close") != std::string::npos;
}

// The 400 for a request that is not valid HTTP/1.1.
inline Response MalformedRequestResponse() {
  return ProblemResponse(base::ApiError(absl::StatusCode::kInvalidArgument, "MALFORMED_REQUEST",
                                        "the request is not valid HTTP/1.1"),
                         NewDiagnosticId());
}

// The 413 for a body past ServerOptions::max_body_bytes.
inline Response BodyTooLargeResponse(size_t max_body_bytes) {
  return ProblemResponse(
      base::ApiError(absl::StatusCode::kResourceExhausted, "BODY_TOO_LARGE",
                     absl::StrCat("request body exceeds ", max_body_bytes, " bytes"), 413),
      NewDiagnosticId());
}

// The 414 for a request line, and the 431 for header fields, past
// ServerOptions::max_header_bytes.
inline Response UriTooLongResponse(size_t max_header_bytes) {
  return ProblemResponse(
      base::ApiError(absl::StatusCode::kInvalidArgument, "URI_TOO_LONG",
                     absl::StrCat("the request line exceeds ", max_header_bytes, " bytes"), 414),
      NewDiagnosticId());
}
inline Response HeadersTooLargeResponse(size_t max_header_bytes) {
  return ProblemResponse(
      base::ApiError(absl::StatusCode::kInvalidArgument, "HEADERS_TOO_LARGE",
                     absl::StrCat("request header fields exceed ", max_header_bytes, " bytes"),
                     431),
      NewDiagnosticId());
}

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_SERVER_COMMON_H_
