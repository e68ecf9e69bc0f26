#ifndef AEVATAR_AEVATAR_SKILLS_SKILL_REQUESTS_H_
#define AEVATAR_AEVATAR_SKILLS_SKILL_REQUESTS_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "aevatar/skills/skill_bundle.h"

// The bodies of the skill registry's HTTP requests (docs/skills.md), read
// with typed errors: 400 MALFORMED_JSON (not a JSON object), 400
// INVALID_FIELD_TYPE (a member of the wrong type; the detail names the
// field, never its value). Pure functions.
namespace aevatar::orchestrator {

// POST /api/skills: {"skill_yaml": TEXT, "assets": {"FILE.yaml": TEXT, …}}.
// Not validated beyond the JSON types (ValidateSkillBundle does that).
absl::StatusOr<SkillBundle> ParsePublishRequest(std::string_view body);

// POST /api/skills/use: {"skill": "NAME[@VERSION]", "mount_workflows": BOOL
// (default false), "digest": "sha256:…" (optional: the content the caller
// pins)}. A digest not of that form is 400 SKILL_DIGEST_INVALID.
struct UseSkillRequest {
  SkillRef ref;
  bool mount_workflows = false;
  std::optional<std::string> digest;
};
absl::StatusOr<UseSkillRequest> ParseUseSkillRequest(std::string_view body);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_SKILLS_SKILL_REQUESTS_H_
