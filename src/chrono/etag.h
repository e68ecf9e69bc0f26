#ifndef AEVATAR_CHRONO_ETAG_H_
#define AEVATAR_CHRONO_ETAG_H_

#include <string>
#include <string_view>

namespace aevatar::chrono {

// A strong ETag for a representation: a quoted digest of its exact bytes, so
// it changes exactly when the representation does.
std::string StrongETag(std::string_view representation);

// RFC 9110 If-None-Match with weak comparison: true when `header` is "*" or
// lists a tag whose opaque value equals `etag`'s (W/ prefixes ignored).
bool IfNoneMatchHits(std::string_view header, std::string_view etag);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_ETAG_H_
