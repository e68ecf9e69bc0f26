#include "nyxid/proxy/proxy_headers.h"

#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "base/api_error.h"

namespace aevatar::nyxid {
namespace {

std::string Lower(std::string_view text) {
  return absl::AsciiStrToLower(absl::string_view(text.data(), text.size()));
}

// Field names listed in the Connection header(s), lowercased.
std::set<std::string> ConnectionListed(const http::Headers& headers) {
  std::set<std::string> names;
  for (const auto& [name, value] : headers.fields()) {
    if (Lower(name) != "connection") continue;
    for (absl::string_view token : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
      names.insert(Lower(std::string(absl::StripAsciiWhitespace(token))));
    }
  }
  return names;
}

absl::Status BadPath() {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "PROXY_PATH_INVALID",
                        "the proxied path is not allowed", 400);
}

}  // namespace

bool IsHopByHop(std::string_view name) {
  static const std::set<std::string> kHopByHop = {
      "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
      "te",         "trailer",    "trailers",           "transfer-encoding",   "upgrade"};
  return kHopByHop.count(Lower(name)) > 0;
}

http::Headers UpstreamRequestHeaders(const http::Headers& caller,
                                     const UpstreamCredentials& credentials) {
  const std::set<std::string> listed = ConnectionListed(caller);
  http::Headers out;
  for (const auto& [name, value] : caller.fields()) {
    const std::string lower = Lower(name);
    if (IsHopByHop(lower) || listed.count(lower) > 0) continue;
    // NyxID holds the whole body before it forwards: an upstream has nothing
    // to wait for, so the caller's `Expect` stays with NyxID.
    if (lower == "host" || lower == "content-length" || lower == "authorization" ||
        lower == "cookie" || lower == "expect" || absl::StartsWith(lower, "x-nyxid-")) {
      continue;
    }
    out.Add(name, value);
  }
  // RFC 9110 §7.6.3; it also tells an upstream on loopback that the peer
  // it sees is this proxy, not the caller (/metrics refuses such requests).
  out.Add("Via", "1.1 nyxid");
  if (credentials.authorization) out.Set("Authorization", "Bearer " + *credentials.authorization);
  if (credentials.delegation_token) out.Set(kDelegationHeader, *credentials.delegation_token);
  return out;
}

http::Headers DownstreamResponseHeaders(const http::Headers& upstream) {
  const std::set<std::string> listed = ConnectionListed(upstream);
  http::Headers out;
  for (const auto& [name, value] : upstream.fields()) {
    const std::string lower = Lower(name);
    // X-NyxID-* answers speak for NyxID (caller_facts.h): an upstream cannot.
    if (IsHopByHop(lower) || listed.count(lower) > 0 || lower == "content-length" ||
        absl::StartsWith(lower, "x-nyxid-")) {
      continue;
    }
    out.Add(name, value);
  }
  return out;
}

std::string QueryWithoutVia(std::string_view query) {
  std::string out;
  for (absl::string_view part :
       absl::StrSplit(absl::string_view(query.data(), query.size()), '&', absl::SkipEmpty())) {
    absl::string_view name = part.substr(0, part.find('='));
    if (http::PercentDecode(std::string_view(name.data(), name.size())) == kViaParam) continue;
    if (!out.empty()) out += '&';
    out.append(part.data(), part.size());
  }
  return out;
}

absl::StatusOr<std::string> UpstreamUrl(std::string_view base_url, std::string_view raw_rest,
                                        std::string_view query) {
  if (raw_rest.find_first_of(std::string_view("\\\0\r\n", 4)) != std::string_view::npos) {
    return BadPath();
  }
  for (absl::string_view segment :
       absl::StrSplit(absl::string_view(raw_rest.data(), raw_rest.size()), '/')) {
    std::string decoded = http::PercentDecode(std::string_view(segment.data(), segment.size()));
    if (decoded == "." || decoded == ".." ||
        decoded.find_first_of(std::string_view("/\\\0\r\n", 5)) != std::string::npos) {
      return BadPath();
    }
  }
  std::string url(base_url);
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += '/';
  url.append(raw_rest);
  if (!query.empty()) {
    url += '?';
    url.append(query);
  }
  return url;
}

}  // namespace aevatar::nyxid
