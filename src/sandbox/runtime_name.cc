#include "sandbox/runtime_name.h"

#include <algorithm>

namespace aevatar::sandbox {
namespace {

bool IsRuntimeNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

}  // namespace

absl::Status ValidateRuntimeName(std::string_view name) {
  const bool plain = !name.empty() && name.size() <= 64 &&
                     std::all_of(name.begin(), name.end(), IsRuntimeNameChar) && name[0] != '.' &&
                     name[0] != '_' && name[0] != '-';
  if (!plain) {
    return absl::InvalidArgumentError(
        "a runtime name is 1 to 64 characters of a-z, 0-9, '.', '_' and '-', starting with a "
        "letter or digit");
  }
  return absl::OkStatus();
}

}  // namespace aevatar::sandbox
