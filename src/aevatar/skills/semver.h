#ifndef AEVATAR_AEVATAR_SKILLS_SEMVER_H_
#define AEVATAR_AEVATAR_SKILLS_SEMVER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

// Semantic Versioning 2.0.0 (semver.org): the versions of published skills.
namespace aevatar::orchestrator {

struct SemVer {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  std::vector<std::string> prerelease;  // dot-separated identifiers after '-'
  std::string build;                    // after '+'; ignored by precedence

  bool IsPrerelease() const { return !prerelease.empty(); }
};

// Parses MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD] exactly as SemVer 2.0.0's
// grammar says: numeric parts without leading zeros, identifiers of
// [0-9A-Za-z-], no empty identifier, numeric prerelease identifiers without
// leading zeros; at most 64 characters. InvalidArgument with api code
// SKILL_VERSION_INVALID otherwise (the detail never quotes the text).
absl::StatusOr<SemVer> ParseSemVer(std::string_view text);

// SemVer 2.0.0 precedence (section 11): <0, 0 or >0. Build metadata is
// ignored, so 1.0.0+a and 1.0.0+b compare equal.
int CompareSemVer(const SemVer& a, const SemVer& b);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_SKILLS_SEMVER_H_
