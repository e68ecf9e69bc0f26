#include "aevatar/skills/semver.h"

#include <charconv>

#include "base/api_error.h"

namespace aevatar::orchestrator {
namespace {

constexpr size_t kMaxVersionChars = 64;

absl::Status VersionInvalid(const std::string& what) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "SKILL_VERSION_INVALID",
                        "the version must be a semantic version MAJOR.MINOR.PATCH"
                        "[-PRERELEASE][+BUILD]: " +
                            what);
}

// `s` split at each '.' (empty pieces kept).
std::vector<std::string_view> SplitDots(std::string_view s) {
  std::vector<std::string_view> parts;
  for (size_t from = 0;;) {
    const size_t dot = s.find('.', from);
    parts.push_back(s.substr(from, dot == std::string_view::npos ? dot : dot - from));
    if (dot == std::string_view::npos) return parts;
    from = dot + 1;
  }
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    if (!ok) return false;
  }
  return true;
}

// A numeric identifier: digits, no leading zero unless it is "0".
bool IsNumeric(std::string_view s) { return AllDigits(s) && (s.size() == 1 || s[0] != '0'); }

absl::StatusOr<uint64_t> Number(std::string_view s, const char* part) {
  if (!IsNumeric(s)) {
    return VersionInvalid(std::string(part) + " must be digits without a leading zero");
  }
  uint64_t value = 0;
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc() || end != s.data() + s.size()) {
    return VersionInvalid(std::string(part) + " is too large");
  }
  return value;
}

int CompareIdentifiers(const std::string& a, const std::string& b) {
  const bool a_num = AllDigits(a), b_num = AllDigits(b);
  if (a_num && b_num) {  // numerically: no leading zeros, so length first
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
  }
  if (a_num != b_num) return a_num ? -1 : 1;  // numeric < alphanumeric
  const int c = a.compare(b);
  return c < 0 ? -1 : (c == 0 ? 0 : 1);
}

}  // namespace

absl::StatusOr<SemVer> ParseSemVer(std::string_view text) {
  if (text.empty()) return VersionInvalid("it is empty");
  if (text.size() > kMaxVersionChars) return VersionInvalid("it is longer than 64 characters");
  SemVer version;
  std::string_view core = text;
  if (size_t plus = core.find('+'); plus != std::string_view::npos) {
    std::string_view build = core.substr(plus + 1);
    for (std::string_view id : SplitDots(build)) {
      if (!IsIdentifier(id))
        return VersionInvalid("a build identifier is empty or not [0-9A-Za-z-]");
    }
    version.build = std::string(build);
    core = core.substr(0, plus);
  }
  if (size_t dash = core.find('-'); dash != std::string_view::npos) {
    for (std::string_view id : SplitDots(core.substr(dash + 1))) {
      if (!IsIdentifier(id)) {
        return VersionInvalid("a prerelease identifier is empty or not [0-9A-Za-z-]");
      }
      if (AllDigits(id) && !IsNumeric(id)) {
        return VersionInvalid("a numeric prerelease identifier has a leading zero");
      }
      version.prerelease.emplace_back(id);
    }
    core = core.substr(0, dash);
  }
  std::vector<std::string_view> parts = SplitDots(core);
  if (parts.size() != 3) return VersionInvalid("it needs exactly three numeric parts");
  auto major = Number(parts[0], "MAJOR");
  if (!major.ok()) return major.status();
  auto minor = Number(parts[1], "MINOR");
  if (!minor.ok()) return minor.status();
  auto patch = Number(parts[2], "PATCH");
  if (!patch.ok()) return patch.status();
  version.major = *major;
  version.minor = *minor;
  version.patch = *patch;
  return version;
}

int CompareSemVer(const SemVer& a, const SemVer& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  // A prerelease has lower precedence than the release itself.
  if (a.prerelease.empty() || b.prerelease.empty()) {
    if (a.prerelease.empty() == b.prerelease.empty()) return 0;
    return a.prerelease.empty() ? 1 : -1;
  }
  const size_t n = std::min(a.prerelease.size(), b.prerelease.size());
  for (size_t i = 0; i < n; ++i) {
    if (int c = CompareIdentifiers(a.prerelease[i], b.prerelease[i]); c != 0) return c;
  }
  if (a.prerelease.size() == b.prerelease.size()) return 0;
  return a.prerelease.size() < b.prerelease.size() ? -1 : 1;
}

}  // namespace aevatar::orchestrator
