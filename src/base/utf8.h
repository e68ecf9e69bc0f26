#ifndef AEVATAR_BASE_UTF8_H_
#define AEVATAR_BASE_UTF8_H_

#include <string>
#include <string_view>

namespace aevatar::base {

// Returns `bytes` as valid UTF-8, with invalid sequences replaced by U+FFFD
// (JSON strings must be UTF-8; a program's output need not be).
std::string ToValidUtf8(std::string_view bytes);
// Whether `bytes` is all valid UTF-8.
bool IsValidUtf8(std::string_view bytes);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_UTF8_H_
