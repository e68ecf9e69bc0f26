// Listen-address parsing, kept apart from server.cc so it needs no Boost.
#include "http/server.h"

namespace aevatar::http {

absl::StatusOr<std::pair<std::string, uint16_t>> ParseListenAddress(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError("--listen must be HOST:PORT");
  }
  const std::string port = listen.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    return absl::InvalidArgumentError("--listen port must be 0..65535");
  }
  return std::make_pair(listen.substr(0, colon), static_cast<uint16_t>(std::stoi(port)));
}

}  // namespace aevatar::http
