#include "aevatar/skills/skill_rows.h"

#include "base/api_error.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {

using nlohmann::json;

std::string AssetsColumn(const std::map<std::string, std::string>& assets) {
  json object = json::object();
  for (const auto& [file, yaml] : assets) object[file] = yaml;
  return object.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<std::map<std::string, std::string>> AssetsFromColumn(const std::string& text) {
  auto object = base::ParseJsonObject(text);
  if (!object.ok()) return absl::DataLossError("a stored skill's assets are not a JSON object");
  std::map<std::string, std::string> assets;
  for (const auto& [file, yaml] : object->items()) {
    if (!yaml.is_string()) return absl::DataLossError("a stored skill asset is not text");
    assets[file] = yaml.get<std::string>();
  }
  return assets;
}

std::string MountWorkflowsColumn(const SkillMount& mount) {
  return mount.workflows.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<json> MountWorkflowsFromColumn(const std::string& text) {
  auto parsed = base::ParseJson(text);
  if (!parsed.ok() || !parsed->is_array()) {
    return absl::DataLossError("a stored mount's workflows are not a JSON array");
  }
  return parsed;
}

absl::StatusOr<PublishOutcome> DecidePublish(const StoredSkillFacts& stored,
                                             const SkillVersion& skill) {
  if (IsReservedSkillName(skill.name) && skill.publisher != kBundledPublisher) {
    return SkillNameReserved(skill.name);
  }
  if (stored.name_owner && *stored.name_owner != skill.publisher) {
    return base::Forbidden("SKILL_NAME_OWNED",
                           "skill " + skill.name + " belongs to another publisher");
  }
  if (!stored.version_digest) return PublishOutcome::kCreated;
  if (*stored.version_digest == skill.digest) return PublishOutcome::kUnchanged;
  return base::ApiError(absl::StatusCode::kAlreadyExists, "SKILL_VERSION_IMMUTABLE",
                        skill.name + "@" + skill.version + " is published with digest " +
                            *stored.version_digest +
                            "; a published version never changes: publish a new version");
}

absl::Status SkillNameReserved(const std::string& name) {
  return base::Forbidden("SKILL_NAME_RESERVED", "skill " + name + ": names starting with " +
                                                    kReservedSkillPrefix +
                                                    " are reserved for aevatar's bundled skills");
}

absl::Status SkillNotFound(const std::string& name, const std::string& version) {
  return base::ApiError(absl::StatusCode::kNotFound, "SKILL_NOT_FOUND",
                        version.empty() ? "no skill " + name : "no skill " + name + "@" + version);
}

absl::Status MountNotFound() {
  return base::ApiError(absl::StatusCode::kNotFound, "SKILL_MOUNT_NOT_FOUND",
                        "no such skill mount for this caller");
}

}  // namespace aevatar::orchestrator
