#ifndef AEVATAR_AEVATAR_SKILLS_SKILL_BUNDLE_H_
#define AEVATAR_AEVATAR_SKILLS_SKILL_BUNDLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

// A skill of aevatar's registry (docs/skills.md): a `skill.yaml` manifest
// {name, version, description} and its workflows, the YAML files under
// `assets/`. A published name@version is immutable; its digest is
// "sha256:<64 hex>" over the bundle's canonical form (SkillDigest).
namespace aevatar::orchestrator {

inline constexpr size_t kMaxSkillManifestBytes = 16 * 1024;
inline constexpr size_t kMaxSkillAssets = 16;

// A skill's files as published: skill.yaml's text and each asset's text by
// its file name under assets/ (e.g. "codex-exec-check.yaml").
struct SkillBundle {
  std::string manifest_yaml;
  std::map<std::string, std::string> assets;
};

// One workflow a skill carries.
struct SkillWorkflow {
  std::string file;         // its file name under assets/
  std::string workflow_id;  // from the workflow itself
  std::string digest;       // the workflow's own digest (workflow_definition.h)
};

// A validated skill version, and who published it when.
struct SkillVersion {
  std::string name;
  std::string version;  // semver.h
  std::string description;
  std::string digest;  // SkillDigest(bundle)
  SkillBundle bundle;
  std::vector<SkillWorkflow> workflows;  // in file-name order
  std::string publisher;                 // a NyxID user id, or kBundledPublisher
  int64_t published_at_ms = 0;
};

// The publisher of the skills `aevatar up` publishes from the repository's
// skills/ folder (bundled_skills.h): no NyxID user id has this form.
inline constexpr char kBundledPublisher[] = "aevatar:bundled";

// Skill names starting with this belong to kBundledPublisher alone, whether
// or not this aevatar publishes bundled skills: no user can claim one first
// and have others mount their workflows under a bundled name.
inline constexpr char kReservedSkillPrefix[] = "aevatar-";

// Whether `name` is reserved for kBundledPublisher.
bool IsReservedSkillName(std::string_view name);

// 400 SKILL_TRIGGERS_FORBIDDEN for asset `file`: a skill's workflows carry no
// `triggers:` (a mount would install the publisher's unattended runs on the
// mounter's Agent Key); refused at publish and again at mount.
absl::Status SkillTriggersForbidden(const std::string& file);

// Validates `bundle`: the manifest is one YAML mapping with exactly the
// string keys name ([a-z0-9-]{1,63}, starting with a letter), version
// (ParseSemVer) and description (1..1024 characters), at most
// kMaxSkillManifestBytes; 1..kMaxSkillAssets assets named
// [a-z0-9][a-z0-9._-]{0,63}.yaml, each a valid workflow (ParseWorkflowYaml),
// with distinct workflow ids. Returns the version with name, version,
// description, digest, bundle and workflows set (not publisher or time).
// InvalidArgument with api code SKILL_INVALID, SKILL_VERSION_INVALID,
// SKILL_TRIGGERS_FORBIDDEN (a workflow declares `triggers:`), or the
// workflow's own code with the asset's file name in the detail.
absl::StatusOr<SkillVersion> ValidateSkillBundle(const SkillBundle& bundle);

// The digest of `bundle`: "sha256:" + hex SHA-256 of its canonical form, the
// byte string "aevatar-skill-v1\n" followed, for skill.yaml and then each
// asset in file-name order, by "<path>\n<byte length>\n<bytes>\n" (path
// "skill.yaml" or "assets/<file>"). Exact bytes: any change of any file,
// its name or the set of files changes the digest; the order files are
// read in does not.
std::string SkillDigest(const SkillBundle& bundle);

// True for "sha256:" followed by 64 lowercase hex digits.
bool IsSkillDigest(std::string_view text);

// A reference to a skill: NAME or NAME@VERSION.
struct SkillRef {
  std::string name;
  std::optional<std::string> version;  // nullopt: the latest (LatestVersion)
};

// Parses NAME[@VERSION]; InvalidArgument SKILL_INVALID for a bad name,
// SKILL_VERSION_INVALID for a bad version.
absl::StatusOr<SkillRef> ParseSkillRef(std::string_view text);

// The version `use NAME` resolves to among `versions`: the highest-precedence
// release, or the highest prerelease when there is no release. nullopt when
// `versions` holds no valid semantic version.
std::optional<std::string> LatestVersion(const std::vector<std::string>& versions);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_SKILLS_SKILL_BUNDLE_H_
