#include "metrics/http_metrics.h"

#include <string_view>

#include "absl/strings/match.h"
#include "base/api_error.h"
#include "base/crypto.h"

namespace aevatar::metrics {

HttpMetrics::HttpMetrics(Registry& registry, const std::string& prefix)
    : requests_(registry.AddCounter(prefix + "_http_requests_total",
                                    "HTTP requests by route pattern and status.",
                                    {"route", "status"})),
      duration_(registry.AddHistogram(prefix + "_http_request_duration_seconds",
                                      "Time to answer an HTTP request (until the handler "
                                      "returns; a streamed body is not included).",
                                      {"route"})) {}

void HttpMetrics::Observe(const std::string& route, int status, double seconds) {
  requests_->Add({route, std::to_string(status)});
  duration_->Observe({route}, seconds);
}

bool IsLoopbackAddress(const std::string& address) {
  return absl::StartsWith(address, "127.") || address == "::1" ||
         absl::StartsWith(address, "::ffff:127.");
}

// Whether `request` came through a proxy, such as NyxID's route proxy to an
// upstream on 127.0.0.1: then a loopback peer says nothing of who asked.
bool CameThroughAProxy(const http::Request& request) {
  for (const char* header : {"Via", "Forwarded", "X-Forwarded-For", "X-NyxID-Delegation-Token"}) {
    if (request.headers.Get(header).has_value()) return true;
  }
  return false;
}

absl::Status CheckMetricsAccess(const http::Request& request, const std::string& token) {
  if (token.empty()) {
    if (IsLoopbackAddress(request.remote_address) && !CameThroughAProxy(request)) {
      return absl::OkStatus();
    }
    return base::ApiError(absl::StatusCode::kPermissionDenied, "METRICS_FORBIDDEN",
                          "/metrics is served to loopback peers only (not through a proxy) "
                          "unless a metrics token is configured",
                          403);
  }
  constexpr std::string_view kBearer = "Bearer ";
  const std::string header = request.headers.Get("Authorization").value_or("");
  if (header.rfind(kBearer, 0) == 0 &&
      base::ConstantTimeEquals(std::string_view(header).substr(kBearer.size()), token)) {
    return absl::OkStatus();
  }
  return base::ApiError(absl::StatusCode::kUnauthenticated, "METRICS_UNAUTHORIZED",
                        "/metrics needs the configured metrics token as a bearer credential", 401);
}

absl::Status CheckMetricsReadable(const http::Request& request, const std::string& token,
                                  bool kept) {
  if (absl::Status st = CheckMetricsAccess(request, token); !st.ok()) return st;
  if (!kept) {
    return base::ApiError(absl::StatusCode::kUnavailable, "METRICS_UNAVAILABLE",
                          "this server keeps no metrics", 503);
  }
  return absl::OkStatus();
}

http::Response MetricsResponse(std::string text) {
  http::Response response;
  response.body = std::move(text);
  response.headers.Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  response.headers.Set("Cache-Control", "no-store");
  return response;
}

}  // namespace aevatar::metrics
