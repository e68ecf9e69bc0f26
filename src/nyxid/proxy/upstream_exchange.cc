#include "nyxid/proxy/upstream_exchange.h"

#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "absl/strings/match.h"
#include "base/api_error.h"
#include "base/log.h"
#include "http/opened_exchange.h"
#include "nyxid/proxy/proxy_headers.h"

namespace aevatar::nyxid {
namespace {

absl::Status TypedUpstreamError(const absl::Status& status) {
  // The cause (e.g. a failed TLS verification) is for the operator's log
  // only: it names the upstream's host, which callers never see.
  base::Log(base::LogLevel::kWarn, "proxy.upstream_failed", "",
            {{"cause", std::string(status.message())}});
  switch (status.code()) {
    case absl::StatusCode::kDeadlineExceeded:
      return base::ApiError(absl::StatusCode::kDeadlineExceeded, "PROXY_DEADLINE_EXCEEDED",
                            "the upstream service did not answer within the proxy deadline", 504);
    case absl::StatusCode::kUnavailable:
      return base::ApiError(absl::StatusCode::kUnavailable, "UPSTREAM_UNREACHABLE",
                            "the upstream service is unreachable", 502);
    default:
      return base::ApiError(absl::StatusCode::kUnavailable, "UPSTREAM_RESPONSE_INVALID",
                            "the upstream service gave an unusable answer", 502);
  }
}

// text/event-stream (any parameters, any case): server-sent events, whose
// first event must reach the caller as soon as it arrives.
bool IsEventStream(const http::Headers& headers) {
  const std::string type = headers.Get("Content-Type").value_or("");
  constexpr std::string_view kEventStream = "text/event-stream";
  return type.size() >= kEventStream.size() &&
         absl::EqualsIgnoreCase(absl::string_view(type.data(), kEventStream.size()),
                                absl::string_view(kEventStream.data(), kEventStream.size()));
}

bool HasNoBody(int status, const std::string& method) {
  return method == "HEAD" || (status >= 100 && status < 200) || status == 204 || status == 304;
}

// A body streamed on to the caller: `held` first (what was read while
// deciding), then the rest as it comes. Shared by the response's copies;
// the last one to go (sent or not) ends the exchange.
struct StreamedBody {
  std::deque<std::string> held;
  std::unique_ptr<http::BodyReader> rest;
};

}  // namespace

absl::StatusOr<http::Response> ProxyExchange(http::ClientRequest request,
                                             const ExchangeOptions& options) {
  const std::string method = request.method;
  absl::StatusOr<http::OpenedExchange> opened =
      http::OpenExchange(std::move(request), options.queue_limit);
  if (!opened.ok()) return TypedUpstreamError(opened.status());

  http::Response response;
  response.status = opened->head.status;
  response.headers = DownstreamResponseHeaders(opened->head.headers);
  if (HasNoBody(response.status, method)) return response;  // the exchange ends with `opened`
  auto body = std::make_shared<StreamedBody>();
  body->rest = std::move(opened->body);
  // An event stream streams from its first byte, nothing held back for the
  // buffer to fill. Any other body is answered whole when it ends within
  // buffer_limit bytes (decided by size alone, not by timing), and streamed
  // otherwise.
  if (!IsEventStream(opened->head.headers)) {
    size_t held_bytes = 0;
    while (held_bytes < options.buffer_limit) {
      absl::StatusOr<std::optional<std::string>> chunk = body->rest->Next();
      // A failure known before anything is sent can still be answered honestly.
      if (!chunk.ok()) return TypedUpstreamError(chunk.status());
      if (!*chunk) {
        for (const std::string& held : body->held) response.body += held;
        return response;
      }
      held_bytes += (*chunk)->size();
      body->held.push_back(**std::move(chunk));
    }
  }
  response.stream = [body](const http::ChunkWriter& write) {
    while (!body->held.empty()) {
      std::string chunk = std::move(body->held.front());
      body->held.pop_front();
      if (!write(chunk)) return;  // the caller went away; `body` ends the exchange
    }
    while (true) {
      absl::StatusOr<std::optional<std::string>> chunk = body->rest->Next();
      // A failed exchange must not look like a complete body.
      if (!chunk.ok()) throw std::runtime_error("upstream exchange failed mid-body");
      if (!*chunk) return;
      if (!write(**chunk)) return;
    }
  };
  return response;
}

}  // namespace aevatar::nyxid
