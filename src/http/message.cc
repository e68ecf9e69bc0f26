#include "http/message.h"

#include <cctype>

#include "absl/strings/ascii.h"

namespace aevatar::http {
namespace {

// Header names compare case-insensitively (ASCII). Written out because
// Debian's Abseil takes its own string_view, not std::string_view.
bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (absl::ascii_tolower(static_cast<unsigned char>(a[i])) !=
        absl::ascii_tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 3986 unreserved characters pass through PercentEncode untouched.
bool IsUnreserved(unsigned char c) {
  return absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

// Decodes %XX escapes; with `plus_is_space`, '+' becomes ' ' (form/query
// encoding). A malformed escape is kept literally rather than rejected, so a
// stray '%' never turns a request into an error.
std::string Decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      int hi = HexValue(text[i + 1]);
      int lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

}  // namespace

std::optional<std::string> Headers::Get(std::string_view name) const {
  for (const auto& [key, value] : fields_) {
    if (SameName(key, name)) return value;
  }
  return std::nullopt;
}

void Headers::Add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

void Headers::Set(std::string name, std::string value) {
  Remove(name);
  Add(std::move(name), std::move(value));
}

void Headers::Remove(std::string_view name) {
  std::erase_if(fields_, [&](const auto& field) { return SameName(field.first, name); });
}

std::optional<std::string> Request::QueryParam(std::string_view name) const {
  auto params = ParseQuery(query);
  auto it = params.find(std::string(name));
  if (it == params.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> BearerToken(const Request& request) {
  auto header = request.headers.Get("Authorization");
  constexpr std::string_view kScheme = "bearer ";
  if (!header || header->size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>((*header)[i])) != kScheme[i]) return std::nullopt;
  }
  std::string credential = header->substr(kScheme.size());
  while (!credential.empty() && credential.front() == ' ') credential.erase(0, 1);
  while (!credential.empty() && credential.back() == ' ') credential.pop_back();
  if (credential.empty()) return std::nullopt;
  return credential;
}

Response JsonResponse(int status, std::string body) {
  Response response;
  response.status = status;
  response.headers.Set("Content-Type", "application/json");
  response.body = std::move(body);
  return response;
}

std::map<std::string, std::string> ParseQuery(std::string_view query) {
  std::map<std::string, std::string> params;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key = Decode(pair.substr(0, eq), /*plus_is_space=*/true);
    std::string value =
        eq == std::string_view::npos ? "" : Decode(pair.substr(eq + 1), /*plus_is_space=*/true);
    params.emplace(std::move(key), std::move(value));  // emplace keeps the first
  }
  return params;
}

std::string PercentDecode(std::string_view text) { return Decode(text, /*plus_is_space=*/false); }

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (IsUnreserved(byte)) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0x0F]);
    }
  }
  return out;
}

}  // namespace aevatar::http
