#include "base/errno_error.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace aevatar::base {

absl::Status ErrnoError(std::string_view what, int err) {
  char buf[128];
  // GNU strerror_r returns a pointer that may or may not be buf.
  const char* text = strerror_r(err, buf, sizeof(buf));
  return absl::Status(absl::ErrnoToStatusCode(err), absl::StrCat(std::string(what), ": ", text));
}

}  // namespace aevatar::base
