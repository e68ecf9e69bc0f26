#include "cli/backup_manifest.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/json_read.h"
#include "nlohmann/json.hpp"

namespace aevatar::cli {
namespace {

constexpr size_t kMaxPathChars = 4096;

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The secret files of the three services, by name; each reason says what the
// key protects and how to keep it (docs/backup.md).
struct SecretName {
  const char* name;
  const char* reason;
};
constexpr SecretName kSecrets[] = {
    {"vault.key",
     "secret: aevatar's vault key (seals codex.db, approvals.db and workflows.db); copy it to "
     "separate protected storage: the backup's databases are unreadable without it"},
    {"at-rest.key",
     "secret: the at-rest key of NyxID (provider keys in nyxid.db) or chrono-sandbox (queued "
     "runs' Agent Keys in operations.db); copy it to separate protected storage"},
    {"signing-keys.json",
     "secret: NyxID's token signing keys; without them NyxID makes new ones and every issued "
     "token stops verifying; copy it to separate protected storage"},
    {"credentials.json",
     "secret: the passwords and introspection secret `aevatar up` generated; copy it to "
     "separate protected storage"},
};

absl::StatusOr<ManifestEntry> ParseEntry(const nlohmann::json& item) {
  ManifestEntry entry;
  auto path = base::RequiredString(item, "path");
  auto kind = base::RequiredString(item, "kind");
  auto size = base::RequiredInt(item, "size");
  auto sha256 = base::RequiredString(item, "sha256");
  for (const absl::Status& s : {path.status(), kind.status(), size.status(), sha256.status()}) {
    if (!s.ok()) return s;
  }
  if (!IsSafeRelativePath(*path)) {
    return absl::InvalidArgumentError("files[].path is not a relative path inside the backup");
  }
  if (*kind != "sqlite" && *kind != "file") {
    return absl::InvalidArgumentError("files[].kind is neither \"sqlite\" nor \"file\"");
  }
  if (*size < 0) return absl::InvalidArgumentError("files[].size is negative");
  if (sha256->size() != 64 || sha256->find_first_not_of("0123456789abcdef") != std::string::npos) {
    return absl::InvalidArgumentError("files[].sha256 is not 64 lowercase hex digits");
  }
  entry.path = *std::move(path);
  entry.database = *kind == "sqlite";
  entry.size = *size;
  entry.sha256 = *std::move(sha256);
  if (entry.database) {
    auto version = base::RequiredInt(item, "schema_version");
    if (!version.ok()) return version.status();
    entry.schema_version = *version;
  }
  return entry;
}

}  // namespace

bool IsSafeRelativePath(std::string_view path) {
  if (path.empty() || path.size() > kMaxPathChars || path.front() == '/') return false;
  if (path.find('\0') != std::string_view::npos) return false;
  for (size_t start = 0;;) {
    const size_t slash = path.find('/', start);
    const std::string_view segment = path.substr(start, slash - start);
    if (segment.empty() || segment == "." || segment == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

FileClass ClassifyStateFile(std::string_view relative_path, bool sqlite_header) {
  const std::string_view name = BaseName(relative_path);
  for (std::string_view suffix : {"-wal", "-shm", "-journal"}) {
    if (name.ends_with(suffix)) return {FileRole::kSidecar, ""};
  }
  if (sqlite_header) return {FileRole::kDatabase, ""};
  for (const SecretName& secret : kSecrets) {
    if (name == secret.name) return {FileRole::kSecret, secret.reason};
  }
  // Another key file, e.g. a vault key staged by `aevatar vault rotate-key`.
  if (name.ends_with(".key") || name.find(".key.") != std::string_view::npos) {
    return {FileRole::kSecret, "secret: a key file; copy it to separate protected storage"};
  }
  // Which operations a restarted chrono-sandbox marks uncertain (those its
  // previous process left running) follows this id.
  if (name == "runner.id") return {FileRole::kPlainCopy, ""};
  if (name == "bootstrap.yaml") {
    return {FileRole::kRegenerated,
            "written again by `aevatar up` at every start (a NyxID --bootstrap file is the "
            "operator's own configuration)"};
  }
  return {FileRole::kOther, "not part of the services' state"};
}

std::string ManifestJson(const BackupManifest& manifest) {
  nlohmann::json files = nlohmann::json::array();
  for (const ManifestEntry& entry : manifest.files) {
    nlohmann::json item = {{"path", entry.path},
                           {"kind", entry.database ? "sqlite" : "file"},
                           {"size", entry.size},
                           {"sha256", entry.sha256}};
    if (entry.database) item["schema_version"] = entry.schema_version;
    files.push_back(std::move(item));
  }
  nlohmann::json not_copied = nlohmann::json::array();
  for (const NotCopied& skipped : manifest.not_copied) {
    not_copied.push_back({{"path", skipped.path}, {"reason", skipped.reason}});
  }
  const nlohmann::json doc = {
      {"format", kManifestFormat},           {"created_at", manifest.created_at},
      {"state_dir", manifest.state_dir},     {"files", std::move(files)},
      {"not_copied", std::move(not_copied)},
  };
  return doc.dump(2) + "\n";
}

absl::StatusOr<BackupManifest> ParseManifest(std::string_view json) {
  auto doc = base::ParseStrictJsonObject(json);
  if (!doc.ok()) return doc.status();
  auto format = base::RequiredString(*doc, "format");
  if (!format.ok()) return format.status();
  if (*format != kManifestFormat) {
    return absl::InvalidArgumentError(
        absl::StrCat("format is not ", kManifestFormat, " (a backup of another version)"));
  }
  BackupManifest manifest;
  manifest.created_at = base::StringOr(*doc, "created_at", "");
  manifest.state_dir = base::StringOr(*doc, "state_dir", "");
  auto files = base::RequiredArray(*doc, "files");
  if (!files.ok()) return files.status();
  for (const nlohmann::json& item : **files) {
    auto entry = ParseEntry(item);
    if (!entry.ok()) return entry.status();
    for (const ManifestEntry& seen : manifest.files) {
      if (seen.path == entry->path) {
        return absl::InvalidArgumentError("files[].path names one file twice");
      }
    }
    manifest.files.push_back(*std::move(entry));
  }
  for (const nlohmann::json& item : base::ArrayOrEmpty(*doc, "not_copied")) {
    manifest.not_copied.push_back(
        {base::StringOr(item, "path", ""), base::StringOr(item, "reason", "")});
  }
  return manifest;
}

}  // namespace aevatar::cli
