#include "nyxid/proxy/upstream_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>

#include "base/api_error.h"

namespace aevatar::nyxid {
namespace {

bool IsForbiddenV4(uint32_t host_order) {
  const uint32_t a = host_order >> 24, b = (host_order >> 16) & 0xff;
  if (a == 169 && b == 254) return true;  // link-local, cloud metadata
  if (a == 0) return true;                // "this host"
  return host_order == 0x64'64'64'c8;     // 100.100.100.200 (metadata)
}

uint32_t V4At(const uint8_t* bytes) {
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

bool IsForbiddenV6(const uint8_t (&b)[16]) {
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return true;  // fe80::/10
  static constexpr uint8_t kMetadata[16] = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0,    0,
                                            0,    0,    0,    0,    0, 0, 0x02, 0x54};
  if (std::memcmp(b, kMetadata, 16) == 0) return true;
  static constexpr uint8_t kZero[12] = {};
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  // ::a.b.c.d (compatible, and :: itself), ::ffff:a.b.c.d, 64:ff9b::a.b.c.d
  if (std::memcmp(b, kZero, 12) == 0 && V4At(b + 12) == 1) return false;  // ::1, loopback
  if (std::memcmp(b, kZero, 12) == 0 || std::memcmp(b, kMapped, 12) == 0 ||
      std::memcmp(b, kNat64, 12) == 0) {
    return IsForbiddenV4(V4At(b + 12));
  }
  return false;
}

absl::Status Forbidden() {
  return base::ApiError(absl::StatusCode::kPermissionDenied, "UPSTREAM_ADDRESS_FORBIDDEN",
                        "the service's upstream is a link-local or metadata address, which the "
                        "platform operator has not allowed",
                        403);
}

}  // namespace

bool IsForbiddenUpstreamIp(std::string_view ip) {
  const std::string text(ip.substr(0, ip.find('%')));  // without an IPv6 zone
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return IsForbiddenV4(ntohl(v4.s_addr));
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) return IsForbiddenV6(v6.s6_addr);
  return false;
}

std::string UrlHost(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return "";
  std::string_view rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    return close == std::string_view::npos ? "" : std::string(rest.substr(1, close - 1));
  }
  return std::string(rest.substr(0, rest.find(':')));
}

absl::Status CheckUpstreamLiteral(std::string_view url, bool allow_link_local) {
  if (allow_link_local || !IsForbiddenUpstreamIp(UrlHost(url))) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "base_url is a link-local or metadata address; set allow_link_local: true on the catalog "
      "service to allow it");
}

absl::Status CheckUpstreamAddress(std::string_view url, bool allow_link_local) {
  if (allow_link_local) return absl::OkStatus();
  const std::string host = UrlHost(url);
  if (IsForbiddenUpstreamIp(host)) return Forbidden();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    return base::ApiError(absl::StatusCode::kUnavailable, "UPSTREAM_UNREACHABLE",
                          "the upstream's name does not resolve", 502);
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
  for (const addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    std::array<char, INET6_ADDRSTRLEN> text{};
    const void* address =
        entry->ai_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(entry->ai_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(entry->ai_addr)->sin6_addr);
    if (inet_ntop(entry->ai_family, address, text.data(), text.size()) != nullptr &&
        IsForbiddenUpstreamIp(text.data())) {
      return Forbidden();
    }
  }
  return absl::OkStatus();
}

}  // namespace aevatar::nyxid
