#ifndef AEVATAR_NYXID_API_NYXID_METRICS_H_
#define AEVATAR_NYXID_API_NYXID_METRICS_H_

#include <string>

#include "metrics/http_metrics.h"
#include "metrics/registry.h"

namespace aevatar::nyxid {

// NyxID's series, rendered at GET /metrics (docs/operations.md lists them):
//   nyxid_http_requests_total{route,status},
//   nyxid_http_request_duration_seconds{route},
//   nyxid_logins_total{outcome}            "succeeded" or the refusal's code,
//   nyxid_tokens_minted_total{kind}        access | delegation (signed, not reused),
//   nyxid_proxy_exchanges_total{status}    the proxied request's answer status,
//   nyxid_proxy_upstream_duration_seconds  send to upstream response headers.
// Labels are route patterns, status codes, typed codes and fixed kinds: never
// user names, slugs or ids. Thread-safe.
class NyxidMetrics {
 public:
  NyxidMetrics();

  // One answered request of `route` (pattern); counts logins and proxy
  // exchanges by their route. `code` is the typed error code ("" on success).
  void CountRequest(const std::string& route, int status, const std::string& code, double seconds);
  // A token was minted: "access" or "delegation".
  void CountTokenMinted(const std::string& kind);
  // One proxied exchange reached the upstream and took `seconds` to its
  // response headers (or to the failure).
  void ObserveUpstream(double seconds);

  std::string Render() const { return registry_.Render(); }

 private:
  metrics::Registry registry_;
  metrics::HttpMetrics http_;
  metrics::Counter* logins_;
  metrics::Counter* tokens_minted_;
  metrics::Counter* proxy_exchanges_;
  metrics::Histogram* upstream_seconds_;
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_API_NYXID_METRICS_H_
