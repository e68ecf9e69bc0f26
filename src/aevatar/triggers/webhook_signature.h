#ifndef AEVATAR_AEVATAR_TRIGGERS_WEBHOOK_SIGNATURE_H_
#define AEVATAR_AEVATAR_TRIGGERS_WEBHOOK_SIGNATURE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

// The signature of a webhook delivery (POST /api/hooks/{id}):
//
//   X-Aevatar-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>
//
// The secret is the hook's secret exactly as shown to its owner (the text
// "whsec_…"), the body the raw request bytes. A delivery is accepted within
// kWebhookReplayWindowSeconds of `t` either way (clock skew); a delivery
// seen once is refused afterwards (the caller's replay store, keyed on the
// delivery key below, never on the header's spelling). Comparison is
// constant-time. Several v1= entries may be given (a sender rotating
// secrets); one must match. `t` is decimal without leading zeros.
namespace aevatar::orchestrator {

inline constexpr char kWebhookSignatureHeader[] = "X-Aevatar-Signature";
inline constexpr int64_t kWebhookReplayWindowSeconds = 300;

// Typed codes of a refused delivery (both 401).
inline constexpr char kWebhookSignatureInvalid[] = "WEBHOOK_SIGNATURE_INVALID";
inline constexpr char kWebhookSignatureStale[] = "WEBHOOK_SIGNATURE_STALE";

// What a well-formed header says, before the secret is known.
struct WebhookSignature {
  int64_t timestamp = 0;          // unix seconds
  std::vector<std::string> macs;  // the v1= values, lowercase hex, 64 characters each
};

// Parses the header value; 401 WEBHOOK_SIGNATURE_INVALID when it is missing
// or malformed, 401 WEBHOOK_SIGNATURE_STALE when `t` is more than the replay
// window away from `now_seconds`. Checked before the hook is looked up, so
// neither answer says whether a hook exists.
absl::StatusOr<WebhookSignature> ParseWebhookSignature(std::string_view header,
                                                       int64_t now_seconds);

// Whether one of the signature's MACs is HMAC-SHA256(secret, t "." body),
// compared in constant time. Returns the delivery key, "t=<t>,v1=<the MAC
// that matched>": the same for every spelling of one delivery's header
// (extra schemes, spaces, order, repeated entries), so the replay store
// keyed on it refuses a re-spelled replay. 401 WEBHOOK_SIGNATURE_INVALID
// when no MAC matches.
absl::StatusOr<std::string> VerifyWebhookSignature(const WebhookSignature& signature,
                                                   std::string_view secret, std::string_view body);

// The header value a sender computes (tests, docs examples).
std::string SignWebhook(std::string_view secret, int64_t timestamp, std::string_view body);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_TRIGGERS_WEBHOOK_SIGNATURE_H_
