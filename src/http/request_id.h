#ifndef AEVATAR_HTTP_REQUEST_ID_H_
#define AEVATAR_HTTP_REQUEST_ID_H_

#include <string>
#include <string_view>

#include "http/message.h"

namespace aevatar::http {

// The request id of `request`: its X-Request-Id header when that is sane
// (1..64 characters of A-Z a-z 0-9 . _ : -, so a caller's own correlation id
// flows through a proxy chain), else a fresh "req_" + 16 random hex digits.
// The Router gives every request one (log lines, problem+json bodies and the
// X-Request-Id response header carry it).
std::string RequestIdOf(const Request& request);

// True when `id` is acceptable as a caller-supplied request id (see above).
bool IsSaneRequestId(std::string_view id);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_REQUEST_ID_H_
