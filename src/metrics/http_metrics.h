#ifndef AEVATAR_METRICS_HTTP_METRICS_H_
#define AEVATAR_METRICS_HTTP_METRICS_H_

// What every service's GET /metrics has in common: the per-request series
// and the rule of who may read them.
//
// Access (docs/operations.md, "Who may read /metrics"): with no metrics token
// configured, only a loopback peer (127.0.0.0/8, ::1) may read — a service
// listening on a public address does not publish its counters to the world
// by default. With a token (`--metrics-token-file`), any peer presenting
// `Authorization: Bearer <token>` may, and nobody else, loopback included.

#include <string>

#include "absl/status/status.h"
#include "http/message.h"
#include "metrics/registry.h"

namespace aevatar::metrics {

// <prefix>_http_requests_total{route,status} and
// <prefix>_http_request_duration_seconds{route}: route is the router's
// pattern ("/executions/{id}"), never the path, so ids stay out of labels.
class HttpMetrics {
 public:
  // Registers both families in `registry` (which must outlive this).
  HttpMetrics(Registry& registry, const std::string& prefix);
  // Records one answered request. Thread-safe.
  void Observe(const std::string& route, int status, double seconds);

 private:
  Counter* requests_;
  Histogram* duration_;
};

// True for a loopback peer address as the HTTP server reports it.
bool IsLoopbackAddress(const std::string& address);

// OK when `request` may read /metrics under the rule above (`token` "" =
// none configured); else 401 METRICS_UNAUTHORIZED (a token is configured and
// the request does not carry it) or 403 METRICS_FORBIDDEN (no token
// configured and the peer is not loopback).
absl::Status CheckMetricsAccess(const http::Request& request, const std::string& token);

// What every service's GET /metrics checks before rendering: OK when
// `request` may read (CheckMetricsAccess) and the server keeps metrics
// (`kept`); else CheckMetricsAccess's error, or 503 METRICS_UNAVAILABLE when
// the server keeps none. Access is checked first, so an unauthorised caller
// learns nothing about the server.
absl::Status CheckMetricsReadable(const http::Request& request, const std::string& token,
                                  bool kept);

// The 200 answer carrying `text` with the exposition format's content type.
http::Response MetricsResponse(std::string text);

}  // namespace aevatar::metrics

#endif  // AEVATAR_METRICS_HTTP_METRICS_H_
