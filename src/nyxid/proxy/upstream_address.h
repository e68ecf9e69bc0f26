#ifndef AEVATAR_NYXID_PROXY_UPSTREAM_ADDRESS_H_
#define AEVATAR_NYXID_PROXY_UPSTREAM_ADDRESS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

// Which hosts an upstream base_url may reach (SSRF). Upstreams are set by the
// operator only (the bootstrap file), but a name can resolve anywhere, so the
// proxy checks the addresses again on every request. Refused unless the
// catalog service says allow_link_local:
//   - IPv4 169.254.0.0/16 (link-local; 169.254.169.254 is the cloud metadata
//     service), 0.0.0.0/8 ("this host": reaches local services), and the
//     metadata address 100.100.100.200;
//   - IPv6 fe80::/10 (link-local), :: (unspecified), fd00:ec2::254 (metadata);
//   - any of those IPv4 addresses embedded in IPv6: IPv4-mapped ::ffff:a.b.c.d,
//     IPv4-compatible ::a.b.c.d and NAT64 64:ff9b::a.b.c.d.
// Loopback and private ranges stay allowed: they are where the platform's own
// services (chrono-sandbox, aevatar) listen.
//
// Limits: the HTTP client resolves the name again when it connects, so a name
// whose answer changes between the two lookups (DNS rebinding) is caught only
// by the check here; pinning the checked address needs the client (src/http).
namespace aevatar::nyxid {

// Whether `ip` (a numeric IPv4 or IPv6 address, no brackets) is refused.
// False for anything that is not an IP literal.
bool IsForbiddenUpstreamIp(std::string_view ip);

// The host of an http:// or https:// URL: without userinfo, port or IPv6
// brackets ("" when there is none).
std::string UrlHost(std::string_view url);

// Checks the literal host of `url` only (no DNS): for the bootstrap file.
// InvalidArgument naming the rule otherwise.
absl::Status CheckUpstreamLiteral(std::string_view url, bool allow_link_local);

// Checks the host of `url` and every address it resolves to now. 403
// UPSTREAM_ADDRESS_FORBIDDEN for a refused address, 502 UPSTREAM_UNREACHABLE
// when the name does not resolve. OK at once when `allow_link_local`.
absl::Status CheckUpstreamAddress(std::string_view url, bool allow_link_local);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_PROXY_UPSTREAM_ADDRESS_H_
