#ifndef AEVATAR_AEVATAR_SKILLS_SKILL_DIR_H_
#define AEVATAR_AEVATAR_SKILLS_SKILL_DIR_H_

#include <string>

#include "absl/status/statusor.h"
#include "aevatar/skills/skill_bundle.h"
#include "aevatar/skills/skill_store.h"

// Skills as directories on disk: DIR/skill.yaml and DIR/assets/*.yaml (what
// `aevatar skill publish DIR` sends, and what `aevatar up` publishes from the
// repository's skills/ folder). Other files (SKILL.md, README.md) are the
// skill's documentation and are not published.
namespace aevatar::orchestrator {

// Reads the skill in `dir`: skill.yaml and each regular file assets/*.yaml.
// NotFound when skill.yaml is missing; InvalidArgument SKILL_INVALID when a
// file is larger than its bound or unreadable. Not validated
// (ValidateSkillBundle does that).
absl::StatusOr<SkillBundle> ReadSkillDir(const std::string& dir);

// Publishes, as kBundledPublisher at `now_ms`, every skill directory under
// `root` (each subdirectory holding a skill.yaml), in name order. Idempotent:
// an unchanged version is left as it is. A skill that does not validate or
// collides with a stored version of other content (409
// SKILL_VERSION_IMMUTABLE: edited without a new version) is logged and
// skipped, so one bad bundle does not keep the service from starting.
// Returns how many skills are now stored as published here; NotFound when
// `root` is not a directory.
absl::StatusOr<int> PublishBundledSkills(SkillStore& store, const std::string& root,
                                         int64_t now_ms);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_SKILLS_SKILL_DIR_H_
