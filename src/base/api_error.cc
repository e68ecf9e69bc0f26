#include "base/api_error.h"

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"

namespace aevatar::base {
namespace {

constexpr char kCodeUrl[] = "type.aevatar/api-code";
constexpr char kHttpUrl[] = "type.aevatar/http-status";

}  // namespace

absl::Status ApiError(absl::StatusCode code, std::string api_code, std::string detail,
                      std::optional<int> http_status) {
  absl::Status status(code, detail);
  status.SetPayload(kCodeUrl, absl::Cord(api_code));
  if (http_status) status.SetPayload(kHttpUrl, absl::Cord(std::to_string(*http_status)));
  return status;
}

absl::Status Forbidden(std::string api_code, std::string detail) {
  return ApiError(absl::StatusCode::kPermissionDenied, std::move(api_code), std::move(detail), 403);
}

std::string ApiCode(const absl::Status& status) {
  if (auto payload = status.GetPayload(kCodeUrl)) return std::string(*payload);
  return absl::AsciiStrToUpper(absl::StatusCodeToString(status.code()));
}

int HttpStatusFor(const absl::Status& status) {
  if (auto payload = status.GetPayload(kHttpUrl)) {
    int http = 0;
    if (absl::SimpleAtoi(std::string(*payload), &http)) return http;
  }
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

}  // namespace aevatar::base
