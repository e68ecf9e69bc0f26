#ifndef AEVATAR_BASE_CLOCK_H_
#define AEVATAR_BASE_CLOCK_H_

#include <cstdint>
#include <string>

namespace aevatar::base {

// Wall-clock time since the Unix epoch.
int64_t NowUnixMs();
int64_t NowUnixSecs();

// RFC 3339 UTC with milliseconds, e.g. "2026-11-29T07:15:36.123Z".
std::string FormatUtcMillis(int64_t unix_ms);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_CLOCK_H_
