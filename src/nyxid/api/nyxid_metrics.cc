#include "nyxid/api/nyxid_metrics.h"

#include "absl/strings/ascii.h"

namespace aevatar::nyxid {

namespace {

// The route patterns whose requests count as logins and proxy exchanges.
constexpr char kMetricsLoginRoute[] = "/api/v1/auth/login";
constexpr char kMetricsProxyRoute[] = "/api/v1/proxy/{slug}/{path...}";

}  // namespace

NyxidMetrics::NyxidMetrics()
    : http_(registry_, "nyxid"),
      logins_(registry_.AddCounter("nyxid_logins_total",
                                   "Password logins by outcome: succeeded, or the refusal's "
                                   "typed code in lower case.",
                                   {"outcome"})),
      tokens_minted_(registry_.AddCounter("nyxid_tokens_minted_total",
                                          "Tokens NyxID signed, by kind (access, delegation).",
                                          {"kind"})),
      proxy_exchanges_(registry_.AddCounter(
          "nyxid_proxy_exchanges_total",
          "Requests to the exact-route proxy by the HTTP status NyxID answered (the upstream's "
          "own status when the exchange happened).",
          {"status"})),
      upstream_seconds_(registry_.AddHistogram(
          "nyxid_proxy_upstream_duration_seconds",
          "Time from sending a proxied request upstream to its response headers or failure.")) {}

void NyxidMetrics::CountRequest(const std::string& route, int status, const std::string& code,
                                double seconds) {
  http_.Observe(route, status, seconds);
  if (route == kMetricsLoginRoute) {
    logins_->Add({code.empty() ? std::string("succeeded") : absl::AsciiStrToLower(code)});
  } else if (route == kMetricsProxyRoute) {
    proxy_exchanges_->Add({std::to_string(status)});
  }
}

void NyxidMetrics::CountTokenMinted(const std::string& kind) { tokens_minted_->Add({kind}); }

void NyxidMetrics::ObserveUpstream(double seconds) { upstream_seconds_->Observe({}, seconds); }

}  // namespace aevatar::nyxid
