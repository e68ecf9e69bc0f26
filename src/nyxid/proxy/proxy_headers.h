#ifndef AEVATAR_NYXID_PROXY_PROXY_HEADERS_H_
#define AEVATAR_NYXID_PROXY_PROXY_HEADERS_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "http/message.h"

// The proxy's header and URL policy, as pure functions.
//
// Caller -> upstream: hop-by-hop fields (RFC 9110 §7.6.1: Connection and the
// fields it names, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding,
// Upgrade), Host, Content-Length, Cookie, every X-NyxID-* field and the
// caller's Authorization are dropped. The route's policy then adds back
// Authorization (the caller's own credential, unchanged) and/or a freshly
// minted X-NyxID-Delegation-Token.
//
// Upstream -> caller: hop-by-hop fields, framing (Content-Length,
// Transfer-Encoding) and every X-NyxID-* field are dropped; the server frames the body itself.
// Status, Location, ETag, Retry-After, Content-Type and every other end-to-end field pass
// unchanged.
namespace aevatar::nyxid {

inline constexpr char kDelegationHeader[] = "X-NyxID-Delegation-Token";
inline constexpr char kViaParam[] = "_nyxid_via";

// True for fields that describe one connection, not the message.
bool IsHopByHop(std::string_view name);

struct UpstreamCredentials {
  std::optional<std::string> authorization;     // the caller's bearer, when forwarded
  std::optional<std::string> delegation_token;  // when the route injects one
};

http::Headers UpstreamRequestHeaders(const http::Headers& caller,
                                     const UpstreamCredentials& credentials);

http::Headers DownstreamResponseHeaders(const http::Headers& upstream);

// Returns `query` (raw, undecoded) without any `_nyxid_via` parameter.
std::string QueryWithoutVia(std::string_view query);

// Builds the upstream URL: `base_url` (trailing '/' trimmed) + "/" +
// `raw_rest` (the still-encoded path after /api/v1/proxy/{slug}/) + the
// query. InvalidArgument PROXY_PATH_INVALID when a decoded segment is "." or
// "..", or the path holds a backslash, NUL, CR or LF (it could escape the
// upstream's base path).
absl::StatusOr<std::string> UpstreamUrl(std::string_view base_url, std::string_view raw_rest,
                                        std::string_view query);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_PROXY_PROXY_HEADERS_H_
