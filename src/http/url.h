#ifndef AEVATAR_HTTP_URL_H_
#define AEVATAR_HTTP_URL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

// Private to src/http: splitting the client's http:// and https:// URLs.
namespace aevatar::http {

struct HttpUrl {
  bool tls = false;    // https://: the exchange runs over verified TLS
  std::string host;    // name or IP literal, IPv6 without brackets
  uint16_t port = 80;  // default: 80 for http://, 443 for https://
  std::string target;  // path plus query, never empty ("/" at least), no fragment

  // Returns the Host header value: host, bracketed for IPv6, plus ":port"
  // unless the port is the scheme's default.
  std::string HostHeader() const;
};

// Parses "http[s]://host[:port][/path][?query][#fragment]" (scheme in any
// case). Returns InvalidArgument for any other scheme, userinfo, a bad port,
// or characters that cannot appear in a request line.
absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_URL_H_
