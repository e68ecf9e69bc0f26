#include "aevatar/skills/skill_bundle.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "aevatar/skills/semver.h"
#include "aevatar/workflow/workflow_definition.h"
#include "base/api_error.h"
#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

constexpr size_t kMaxDescriptionChars = 1024;

absl::Status SkillInvalid(const std::string& what) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "SKILL_INVALID", what);
}

bool IsSkillName(std::string_view s) {
  if (s.empty() || s.size() > 63 || s[0] < 'a' || s[0] > 'z') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

bool IsAssetName(std::string_view s) {
  constexpr std::string_view kSuffix = ".yaml";
  if (s.size() <= kSuffix.size() || s.size() > 64 + kSuffix.size()) return false;
  if (s.substr(s.size() - kSuffix.size()) != kSuffix) return false;
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9'))) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')) {
      return false;
    }
  }
  return true;
}

// A workflow error of asset `file`: same code, the file named first (the
// file name was validated, so it is safe to show).
absl::Status InAsset(const std::string& file, const absl::Status& error) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, base::ApiCode(error),
                        absl::StrCat("assets/", file, ": ", error.message()));
}

// skill.yaml as a JSON object of the three string keys.
absl::StatusOr<json> ReadManifest(const std::string& text) {
  if (text.size() > kMaxSkillManifestBytes) {
    return SkillInvalid(absl::StrCat("skill.yaml exceeds ", kMaxSkillManifestBytes, " bytes"));
  }
  auto tree = ParseYamlDocument(text);
  if (!tree.ok()) return SkillInvalid(absl::StrCat("skill.yaml: ", tree.status().message()));
  if (!tree->is_object()) return SkillInvalid("skill.yaml must be a mapping");
  for (const auto& [key, value] : tree->items()) {
    if (key != "name" && key != "version" && key != "description") {
      return SkillInvalid("skill.yaml: only name, version and description are allowed");
    }
    if (!value.is_string()) return SkillInvalid("skill.yaml: " + key + " must be a string");
  }
  for (const char* key : {"name", "version", "description"}) {
    if (!tree->contains(key))
      return SkillInvalid(std::string("skill.yaml: ") + key + " is missing");
  }
  return tree;
}

}  // namespace

absl::StatusOr<SkillVersion> ValidateSkillBundle(const SkillBundle& bundle) {
  auto manifest = ReadManifest(bundle.manifest_yaml);
  if (!manifest.ok()) return manifest.status();
  SkillVersion skill;
  skill.name = (*manifest)["name"].get<std::string>();
  skill.version = (*manifest)["version"].get<std::string>();
  skill.description = (*manifest)["description"].get<std::string>();
  if (!IsSkillName(skill.name)) {
    return SkillInvalid("skill.yaml: name must be [a-z0-9-]{1,63} starting with a letter");
  }
  if (auto version = ParseSemVer(skill.version); !version.ok()) return version.status();
  if (skill.description.empty() || skill.description.size() > kMaxDescriptionChars) {
    return SkillInvalid("skill.yaml: description must hold 1..1024 characters");
  }
  if (bundle.assets.empty() || bundle.assets.size() > kMaxSkillAssets) {
    return SkillInvalid(
        absl::StrCat("a skill carries 1..", kMaxSkillAssets, " workflows (assets/*.yaml)"));
  }
  std::set<std::string> ids;
  for (const auto& [file, yaml] : bundle.assets) {
    if (!IsAssetName(file)) {
      return SkillInvalid("an asset's file name must be [a-z0-9][a-z0-9._-]{0,63}.yaml");
    }
    auto workflow = ParseWorkflowYaml(yaml);
    if (!workflow.ok()) return InAsset(file, workflow.status());
    if (!workflow->triggers.empty()) return SkillTriggersForbidden(file);
    if (!ids.insert(workflow->workflow_id).second) {
      return SkillInvalid("assets/" + file + ": another asset has the same workflow_id");
    }
    skill.workflows.push_back({file, workflow->workflow_id, workflow->digest});
  }
  skill.bundle = bundle;
  skill.digest = SkillDigest(bundle);
  return skill;
}

absl::Status SkillTriggersForbidden(const std::string& file) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "SKILL_TRIGGERS_FORBIDDEN",
                        "assets/" + file +
                            ": a skill's workflow may not declare triggers (a mount would run "
                            "the publisher's schedule or webhook on the mounter's Agent Key)");
}

bool IsReservedSkillName(std::string_view name) {
  return name.substr(0, std::string_view(kReservedSkillPrefix).size()) == kReservedSkillPrefix;
}

std::string SkillDigest(const SkillBundle& bundle) {
  std::string canonical = "aevatar-skill-v1\n";
  auto add = [&canonical](const std::string& path, const std::string& bytes) {
    absl::StrAppend(&canonical, path, "\n", bytes.size(), "\n", bytes, "\n");
  };
  add("skill.yaml", bundle.manifest_yaml);
  for (const auto& [file, yaml] : bundle.assets) add("assets/" + file, yaml);  // std::map: sorted
  return "sha256:" + base::Sha256Hex(canonical);
}

bool IsSkillDigest(std::string_view text) {
  constexpr std::string_view kPrefix = "sha256:";
  if (text.size() != kPrefix.size() + 64 || text.substr(0, kPrefix.size()) != kPrefix) {
    return false;
  }
  for (char c : text.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::StatusOr<SkillRef> ParseSkillRef(std::string_view text) {
  SkillRef ref;
  const size_t at = text.find('@');
  ref.name = std::string(text.substr(0, at));
  if (!IsSkillName(ref.name)) {
    return SkillInvalid("a skill is named NAME or NAME@VERSION, NAME [a-z0-9-]{1,63}");
  }
  if (at != std::string_view::npos) {
    std::string_view version = text.substr(at + 1);
    if (auto parsed = ParseSemVer(version); !parsed.ok()) return parsed.status();
    ref.version = std::string(version);
  }
  return ref;
}

std::optional<std::string> LatestVersion(const std::vector<std::string>& versions) {
  std::optional<std::pair<SemVer, std::string>> release, prerelease;
  for (const std::string& text : versions) {
    auto parsed = ParseSemVer(text);
    if (!parsed.ok()) continue;
    auto& best = parsed->IsPrerelease() ? prerelease : release;
    if (!best || CompareSemVer(*parsed, best->first) > 0) best.emplace(*parsed, text);
  }
  if (release) return release->second;
  if (prerelease) return prerelease->second;
  return std::nullopt;
}

}  // namespace aevatar::orchestrator
