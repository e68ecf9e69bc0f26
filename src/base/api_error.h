#ifndef AEVATAR_BASE_API_ERROR_H_
#define AEVATAR_BASE_API_ERROR_H_

#include <optional>
#include <string>

#include "absl/status/status.h"

namespace aevatar::base {

// Errors that reach an API caller carry a stable, typed `code` (e.g.
// "IDEMPOTENCY_KEY_MISSING") next to the absl status code, and optionally an
// explicit HTTP status where no absl code fits (410 Gone, 413, …). Both travel
// as Status payloads, so they survive being passed up through layers.
//
// `detail` is shown to callers: never put a token, key, source code, raw
// idempotency key or route id in it.
absl::Status ApiError(absl::StatusCode code, std::string api_code, std::string detail,
                      std::optional<int> http_status = std::nullopt);

// ApiError(kPermissionDenied, api_code, detail, 403).
absl::Status Forbidden(std::string api_code, std::string detail);

// Returns the typed code of `status`, or a generic one derived from its
// absl code ("INVALID_ARGUMENT", "INTERNAL", …) when none was attached.
std::string ApiCode(const absl::Status& status);

// The one mapping from a Status to an HTTP status: the explicit override when
// present, else by absl code (InvalidArgument 400, Unauthenticated 401,
// PermissionDenied 403, NotFound 404, AlreadyExists/Aborted/FailedPrecondition
// 409, ResourceExhausted 429, Unavailable 503, DeadlineExceeded 504,
// Unimplemented 501, anything else 500).
int HttpStatusFor(const absl::Status& status);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_API_ERROR_H_
