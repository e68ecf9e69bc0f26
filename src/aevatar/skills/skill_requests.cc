#include "aevatar/skills/skill_requests.h"

#include "base/api_error.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

absl::StatusOr<json> ObjectBody(std::string_view body) {
  auto object = base::ParseJsonObject(body);
  if (!object.ok()) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "MALFORMED_JSON",
                          "the body must be a JSON object");
  }
  return object;
}

absl::Status FieldType(const absl::Status& read) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "INVALID_FIELD_TYPE",
                        std::string(read.message()));
}

}  // namespace

absl::StatusOr<SkillBundle> ParsePublishRequest(std::string_view body) {
  auto object = ObjectBody(body);
  if (!object.ok()) return object.status();
  SkillBundle bundle;
  auto manifest = base::RequiredString(*object, "skill_yaml");
  if (!manifest.ok()) return FieldType(manifest.status());
  bundle.manifest_yaml = std::move(*manifest);
  auto assets = base::RequiredObject(*object, "assets");
  if (!assets.ok()) return FieldType(assets.status());
  for (const auto& [file, yaml] : (*assets)->items()) {
    if (!yaml.is_string()) {
      return base::ApiError(absl::StatusCode::kInvalidArgument, "INVALID_FIELD_TYPE",
                            "every member of assets must be a string (a workflow's YAML text)");
    }
    bundle.assets[file] = yaml.get<std::string>();
  }
  return bundle;
}

absl::StatusOr<UseSkillRequest> ParseUseSkillRequest(std::string_view body) {
  auto object = ObjectBody(body);
  if (!object.ok()) return object.status();
  UseSkillRequest request;
  auto skill = base::RequiredString(*object, "skill");
  if (!skill.ok()) return FieldType(skill.status());
  auto ref = ParseSkillRef(*skill);
  if (!ref.ok()) return ref.status();
  request.ref = std::move(*ref);
  auto mount = base::OptionalBool(*object, "mount_workflows");
  if (!mount.ok()) return FieldType(mount.status());
  request.mount_workflows = mount->value_or(false);
  auto digest = base::OptionalString(*object, "digest");
  if (!digest.ok()) return FieldType(digest.status());
  if (*digest && !IsSkillDigest(**digest)) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "SKILL_DIGEST_INVALID",
                          "digest must be sha256: followed by 64 lowercase hex digits");
  }
  request.digest = *digest;
  return request;
}

}  // namespace aevatar::orchestrator
