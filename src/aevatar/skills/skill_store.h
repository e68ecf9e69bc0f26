#ifndef AEVATAR_AEVATAR_SKILLS_SKILL_STORE_H_
#define AEVATAR_AEVATAR_SKILLS_SKILL_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/skills/skill_bundle.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// One `use_skill` with mount_workflows for one caller: each of the skill's
// workflows saved (and admitted) as the caller's own. `state` is "mounting"
// while the workflows are being saved, then "mounted", or "failed" with the
// typed error of the workflow that could not be saved.
struct SkillMount {
  std::string mount_id;
  std::string owner;  // the caller's NyxID user id
  std::string name;
  std::string version;
  std::string digest;
  std::string state;
  // [{workflow_id, file, digest, state: "mounted" | "pending" | "failed"}]
  nlohmann::json workflows = nlohmann::json::array();
  std::string error_code;  // "" unless failed
  std::string error_detail;
  std::string diagnostic_id;  // of the request that mounted it
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

enum class PublishOutcome { kCreated, kUnchanged };

// aevatar's skill registry: the published versions and the mounts. Shared by
// every caller (skills are public to aevatar's users); a name belongs to its
// first publisher. Thread-safe; every write is committed before it returns.
// The contract suite (tests/aevatar/stores/skill_store_suite_test.cc) runs on
// every implementation.
class SkillStore {
 public:
  virtual ~SkillStore() = default;

  // Stores `skill` (validated by ValidateSkillBundle; publisher and time
  // set), atomically: kCreated; kUnchanged when name@version is already
  // stored with the same digest (nothing changes); 409 SKILL_VERSION_IMMUTABLE
  // when it is stored with another digest; 403 SKILL_NAME_OWNED when the
  // name's first publisher is someone else. Concurrent publishers of one
  // name@version store it once.
  virtual absl::StatusOr<PublishOutcome> Publish(const SkillVersion& skill) = 0;

  // The versions of `name` ("" for every skill), by name then publication
  // time, with name, version, description, digest, publisher and time set
  // (no bundle, no workflows).
  virtual absl::StatusOr<std::vector<SkillVersion>> ListVersions(const std::string& name) = 0;

  // name@version with its bundle (workflows empty: ValidateSkillBundle
  // derives them). 404 SKILL_NOT_FOUND.
  virtual absl::StatusOr<SkillVersion> GetVersion(const std::string& name,
                                                  const std::string& version) = 0;

  // Inserts or replaces the mount `mount.mount_id`.
  virtual absl::Status PutMount(const SkillMount& mount) = 0;

  // 404 SKILL_MOUNT_NOT_FOUND when there is none.
  virtual absl::StatusOr<SkillMount> GetMount(const std::string& mount_id) = 0;
};

// A store in the SQLite file at `path` (":memory:" for tests).
absl::StatusOr<std::unique_ptr<SkillStore>> OpenSqliteSkillStore(const std::string& path);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_SKILLS_SKILL_STORE_H_
