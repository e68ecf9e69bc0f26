#include "aevatar/triggers/webhook_signature.h"

#include <cstdlib>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/api_error.h"
#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

constexpr size_t kMaxHeaderBytes = 1024;
constexpr size_t kMaxMacs = 4;

absl::Status Invalid(const char* detail) {
  return base::ApiError(absl::StatusCode::kUnauthenticated, kWebhookSignatureInvalid, detail, 401);
}

bool IsLowerHex(absl::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string Mac(std::string_view secret, int64_t timestamp, std::string_view body) {
  return base::HexEncode(
      base::HmacSha256(secret, std::to_string(timestamp) + "." + std::string(body)));
}

}  // namespace

absl::StatusOr<WebhookSignature> ParseWebhookSignature(std::string_view header_text,
                                                       int64_t now_seconds) {
  const absl::string_view header(header_text.data(), header_text.size());
  if (header.empty()) return Invalid("the X-Aevatar-Signature header is missing");
  if (header.size() > kMaxHeaderBytes) return Invalid("the signature header is too long");
  WebhookSignature signature;
  bool have_time = false;
  for (absl::string_view part : absl::StrSplit(header, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, "t=")) {
      // Digits only, no leading zero: one spelling per timestamp.
      if (have_time || part.empty() || part.size() > 12 || part[0] < '0' || part[0] > '9' ||
          (part[0] == '0' && part.size() > 1) || !absl::SimpleAtoi(part, &signature.timestamp)) {
        return Invalid("the signature header needs one t=<unix seconds>");
      }
      have_time = true;
    } else if (absl::ConsumePrefix(&part, "v1=")) {
      if (part.size() != 64 || !IsLowerHex(part) || signature.macs.size() >= kMaxMacs) {
        return Invalid("v1= must be 64 lowercase hex digits (at most four)");
      }
      signature.macs.emplace_back(part);
    }
    // Other schemes are ignored, so senders may add newer ones alongside.
  }
  if (!have_time || signature.macs.empty()) {
    return Invalid("the signature header needs t=<unix seconds> and v1=<hex>");
  }
  if (std::llabs(now_seconds - signature.timestamp) > kWebhookReplayWindowSeconds) {
    return base::ApiError(absl::StatusCode::kUnauthenticated, kWebhookSignatureStale,
                          "the signature's timestamp is outside the five-minute window", 401);
  }
  return signature;
}

absl::StatusOr<std::string> VerifyWebhookSignature(const WebhookSignature& signature,
                                                   std::string_view secret, std::string_view body) {
  const std::string expected = Mac(secret, signature.timestamp, body);
  bool matched = false;
  // Every entry is compared (no early exit), each in constant time.
  for (const std::string& mac : signature.macs) {
    matched = base::ConstantTimeEquals(mac, expected) || matched;
  }
  if (!matched) return Invalid("the signature does not match");
  return absl::StrCat("t=", signature.timestamp, ",v1=", expected);
}

std::string SignWebhook(std::string_view secret, int64_t timestamp, std::string_view body) {
  return "t=" + std::to_string(timestamp) + ",v1=" + Mac(secret, timestamp, body);
}

}  // namespace aevatar::orchestrator
