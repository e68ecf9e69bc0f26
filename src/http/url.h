#ifndef AEVATAR_HTTP_URL_H_
#define AEVATAR_HTTP_URL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

// Private to src/http: splitting the client's http:// URLs.
namespace aevatar::http {

struct HttpUrl {
  std::string host;    // name or IP literal, IPv6 without brackets
  uint16_t port = 80;  // default for http://
  std::string target;  // path plus query, never empty ("/" at least), no fragment

  // Returns the Host header value: host, bracketed for IPv6, plus ":port"
  // unless the port is 80.
  std::string HostHeader() const;
};

// Parses "http://host[:port][/path][?query][#fragment]". Returns
// InvalidArgument for any other scheme (https is not supported: services talk
// plain HTTP on loopback or a private network), userinfo, a bad port, or
// characters that cannot appear in a request line.
absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_URL_H_
