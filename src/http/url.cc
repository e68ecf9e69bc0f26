#include "http/url.h"

#include <charconv>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace aevatar::http {
namespace {

// Characters that would break or smuggle into the request line.
bool HasForbiddenChar(std::string_view text) {
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7F) return true;
  }
  return false;
}

// Note: Debian's Abseil has its own string_view, so std::string_view is
// handled with std facilities here.
bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (absl::ascii_tolower(static_cast<unsigned char>(text[i])) !=
        absl::ascii_tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string HttpUrl::HostHeader() const {
  std::string name = host.find(':') != std::string::npos ? absl::StrCat("[", host, "]") : host;
  return port == (tls ? 443 : 80) ? name : absl::StrCat(name, ":", port);
}

absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kHttp = "http://";
  constexpr std::string_view kHttps = "https://";
  HttpUrl parsed;
  std::string_view rest;
  if (StartsWithIgnoreCase(url, kHttp)) {
    rest = url.substr(kHttp.size());
  } else if (StartsWithIgnoreCase(url, kHttps)) {
    rest = url.substr(kHttps.size());
    parsed.tls = true;
    parsed.port = 443;
  } else {
    return absl::InvalidArgumentError("only http:// and https:// URLs are supported");
  }
  if (size_t hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  size_t authority_end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view target =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);

  if (authority.empty()) return absl::InvalidArgumentError("URL has no host");
  if (authority.find('@') != std::string_view::npos) {
    return absl::InvalidArgumentError("URL must not carry credentials");
  }
  std::string_view port_text;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return absl::InvalidArgumentError("bad IPv6 host in URL");
    parsed.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return absl::InvalidArgumentError("bad host in URL");
      port_text = after.substr(1);
      if (port_text.empty()) return absl::InvalidArgumentError("empty port in URL");
    }
  } else {
    size_t colon = authority.find(':');
    parsed.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return absl::InvalidArgumentError("empty port in URL");
    }
  }
  if (parsed.host.empty() || HasForbiddenChar(parsed.host)) {
    return absl::InvalidArgumentError("bad host in URL");
  }
  if (!port_text.empty()) {
    uint32_t port = 0;
    const char* end = port_text.data() + port_text.size();
    auto [parsed_end, error] = std::from_chars(port_text.data(), end, port);
    if (error != std::errc() || parsed_end != end || port == 0 || port > 65535) {
      return absl::InvalidArgumentError("bad port in URL");
    }
    parsed.port = static_cast<uint16_t>(port);
  }
  if (HasForbiddenChar(target)) return absl::InvalidArgumentError("bad characters in URL path");
  if (target.empty() || target.front() == '?') parsed.target.push_back('/');
  parsed.target.append(target);
  return parsed;
}

}  // namespace aevatar::http
