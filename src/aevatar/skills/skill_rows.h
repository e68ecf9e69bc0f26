#ifndef AEVATAR_AEVATAR_SKILLS_SKILL_ROWS_H_
#define AEVATAR_AEVATAR_SKILLS_SKILL_ROWS_H_

// What the SQLite and PostgreSQL skill stores share: the column formats of
// their rows and the publish rule, so both keep one contract.

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/skills/skill_store.h"

namespace aevatar::orchestrator {

// The assets column: a JSON object, file name -> YAML text.
std::string AssetsColumn(const std::map<std::string, std::string>& assets);
// DataLoss when the stored text is not such an object.
absl::StatusOr<std::map<std::string, std::string>> AssetsFromColumn(const std::string& text);

// The workflows column of a mount: its JSON array as text; and back
// (DataLoss when the stored text is not an array).
std::string MountWorkflowsColumn(const SkillMount& mount);
absl::StatusOr<nlohmann::json> MountWorkflowsFromColumn(const std::string& text);

// What is already stored under the name (its first publisher) and under
// name@version (its digest), read in the publishing transaction.
struct StoredSkillFacts {
  std::optional<std::string> name_owner;
  std::optional<std::string> version_digest;
};

// The publish rule (SkillStore::Publish) given those facts: kCreated (insert
// the version), kUnchanged, 403 SKILL_NAME_RESERVED (a reserved name from
// anyone but kBundledPublisher), 403 SKILL_NAME_OWNED or 409
// SKILL_VERSION_IMMUTABLE.
absl::StatusOr<PublishOutcome> DecidePublish(const StoredSkillFacts& stored,
                                             const SkillVersion& skill);

// 403 SKILL_NAME_RESERVED: `name` is reserved for the bundled skills.
absl::Status SkillNameReserved(const std::string& name);

// 404 SKILL_NOT_FOUND / SKILL_MOUNT_NOT_FOUND.
absl::Status SkillNotFound(const std::string& name, const std::string& version);
absl::Status MountNotFound();

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_SKILLS_SKILL_ROWS_H_
