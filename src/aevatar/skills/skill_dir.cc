#include "aevatar/skills/skill_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "aevatar/workflow/workflow_definition.h"
#include "base/api_error.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ReadBounded(const fs::path& path, size_t max_bytes) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > max_bytes) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "SKILL_INVALID",
                          path.filename().string() + " is unreadable or larger than " +
                              std::to_string(max_bytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "SKILL_INVALID",
                          path.filename().string() + " could not be read");
  }
  return text.str();
}

}  // namespace

absl::StatusOr<SkillBundle> ReadSkillDir(const std::string& dir) {
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::is_regular_file(root / "skill.yaml", ec)) {
    return absl::NotFoundError("no skill.yaml in " + dir);
  }
  SkillBundle bundle;
  auto manifest = ReadBounded(root / "skill.yaml", kMaxSkillManifestBytes);
  if (!manifest.ok()) return manifest.status();
  bundle.manifest_yaml = std::move(*manifest);
  const fs::path assets = root / "assets";
  if (!fs::is_directory(assets, ec)) return bundle;  // ValidateSkillBundle says what is missing
  for (fs::directory_iterator it(assets, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.extension() != ".yaml" || !it->is_regular_file(ec)) continue;
    if (bundle.assets.size() >= kMaxSkillAssets) {
      return base::ApiError(
          absl::StatusCode::kInvalidArgument, "SKILL_INVALID",
          "a skill carries at most " + std::to_string(kMaxSkillAssets) + " workflows");
    }
    auto yaml = ReadBounded(path, kMaxWorkflowYamlBytes);
    if (!yaml.ok()) return yaml.status();
    bundle.assets[path.filename().string()] = std::move(*yaml);
  }
  if (ec) return absl::InvalidArgumentError("cannot list " + assets.string());
  return bundle;
}

absl::StatusOr<int> PublishBundledSkills(SkillStore& store, const std::string& root,
                                         int64_t now_ms) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return absl::NotFoundError("no skills directory " + root);
  std::vector<fs::path> dirs;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (fs::is_regular_file(it->path() / "skill.yaml", ec)) dirs.push_back(it->path());
  }
  std::sort(dirs.begin(), dirs.end());
  int published = 0;
  for (const fs::path& dir : dirs) {
    const std::string folder = dir.filename().string();
    auto bundle = ReadSkillDir(dir.string());
    absl::StatusOr<SkillVersion> skill =
        bundle.ok() ? ValidateSkillBundle(*bundle) : absl::StatusOr<SkillVersion>(bundle.status());
    absl::StatusOr<PublishOutcome> outcome = absl::UnknownError("not published");
    if (skill.ok()) {
      skill->publisher = kBundledPublisher;
      skill->published_at_ms = now_ms;
      outcome = store.Publish(*skill);
    } else {
      outcome = skill.status();
    }
    if (!outcome.ok()) {
      base::Log(base::LogLevel::kWarn, "skills.bundled_not_published", "",
                {{"folder", folder},
                 {"code", base::ApiCode(outcome.status())},
                 {"detail", std::string(outcome.status().message())}});
      continue;
    }
    ++published;
    base::Log(base::LogLevel::kInfo, "skills.bundled_published", "",
              {{"skill", skill->name + "@" + skill->version},
               {"digest", skill->digest},
               {"created", *outcome == PublishOutcome::kCreated}});
  }
  return published;
}

}  // namespace aevatar::orchestrator
