#ifndef AEVATAR_BASE_CLOCK_H_
#define AEVATAR_BASE_CLOCK_H_

#include <cstdint>
#include <functional>
#include <string>

namespace aevatar::base {

// Wall-clock time since the Unix epoch.
int64_t NowUnixMs();
int64_t NowUnixSecs();

// A wall clock passed as a value (Unix ms), so a service can be given a test
// clock; NowUnixMs is the real one. Must be callable from any thread.
using UnixMsClock = std::function<int64_t()>;

// RFC 3339 UTC with milliseconds, e.g. "2026-11-29T07:15:36.123Z".
std::string FormatUtcMillis(int64_t unix_ms);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_CLOCK_H_
