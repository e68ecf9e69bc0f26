// aevatar backup: an online copy of a state directory's databases.
#include "cli/state_backup.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "base/crypto.h"
#include "base/sha256_stream.h"
#include "os/atomic_file.h"
#include "os/fsync_directory.h"
#include "store/sqlite_backup.h"

namespace aevatar::cli {
namespace fs = std::filesystem;
namespace {

constexpr char kCodePayload[] = "aevatar.backup/code";
constexpr char kSqliteMagic[] = "SQLite format 3";  // and a NUL: 16 bytes

bool HasSqliteHeader(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char header[sizeof(kSqliteMagic)] = {};
  if (!in.read(header, sizeof(header))) return false;
  return std::equal(header, header + sizeof(header), kSqliteMagic);
}

std::string NowRfc3339() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

fs::path WithoutTrailingSlash(fs::path path) {
  return path.has_filename() ? path : path.parent_path();
}

// OK when `backup_dir` may receive a backup: absent, or an empty directory.
absl::Status CheckBackupDir(const fs::path& state_dir, const fs::path& backup_dir) {
  std::error_code ec;
  const fs::path state = WithoutTrailingSlash(fs::weakly_canonical(state_dir, ec));
  const fs::path target = WithoutTrailingSlash(fs::weakly_canonical(backup_dir, ec));
  const auto [state_end, target_at] =
      std::mismatch(state.begin(), state.end(), target.begin(), target.end());
  if (state_end == state.end()) {
    return WithBackupCode(absl::InvalidArgumentError(
                              absl::StrCat(backup_dir.string(), " is inside the state directory ",
                                           state_dir.string(), "; choose a directory outside it")),
                          kBackupDirInStateDir);
  }
  if (!fs::exists(backup_dir, ec)) return absl::OkStatus();
  if (!fs::is_directory(backup_dir, ec) || !fs::is_empty(backup_dir, ec)) {
    return WithBackupCode(absl::FailedPreconditionError(absl::StrCat(
                              backup_dir.string(),
                              " exists and is not an empty directory; a backup never "
                              "overwrites or mixes with another: choose a new directory")),
                          kBackupDirNotEmpty);
  }
  return absl::OkStatus();
}

// Copies the database `source` to `dest` with the online backup API and
// describes the copy (schema version read from the copy itself).
absl::StatusOr<ManifestEntry> CopyDatabase(const std::string& source, const std::string& dest,
                                           const std::string& relative) {
  if (absl::Status s = store::BackupDatabaseFile(source, dest); !s.ok()) return s;
  auto version = store::SchemaVersionOfFile(dest);
  if (!version.ok()) return version.status();
  ManifestEntry entry;
  entry.path = relative;
  entry.database = true;
  entry.schema_version = *version;
  auto digest = DigestFile(dest);
  if (!digest.ok()) return digest.status();
  entry.size = digest->size;
  entry.sha256 = digest->sha256;
  return entry;
}

absl::StatusOr<ManifestEntry> CopyPlainFile(const std::string& source, const std::string& dest,
                                            const std::string& relative) {
  auto bytes = os::ReadSmallFile(source, kMaxPlainFileBytes);
  if (!bytes.ok()) return bytes.status();
  if (absl::Status s = os::WriteFileAtomically(dest, *bytes, 0600, os::IfExists::kFail); !s.ok()) {
    return s;
  }
  ManifestEntry entry;
  entry.path = relative;
  entry.size = static_cast<int64_t>(bytes->size());
  entry.sha256 = base::Sha256Hex(*bytes);
  return entry;
}

}  // namespace

absl::Status WithBackupCode(absl::Status status, std::string_view code) {
  status.SetPayload(kCodePayload, absl::Cord(std::string(code)));
  return status;
}

std::string BackupErrorCode(const absl::Status& status, std::string_view fallback) {
  auto code = status.GetPayload(kCodePayload);
  return code.has_value() ? std::string(*code) : std::string(fallback);
}

absl::StatusOr<std::vector<StateFile>> ListStateFiles(const std::string& state_dir) {
  std::vector<StateFile> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(state_dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::file_status status = it->symlink_status(ec);
    if (ec) break;
    const bool symlink = fs::is_symlink(status);
    if (!symlink && !fs::is_regular_file(status)) continue;
    StateFile file;
    file.path = fs::relative(it->path(), state_dir, ec).generic_string();
    if (ec) break;
    file.symlink = symlink;
    file.sqlite_header = !symlink && HasSqliteHeader(it->path());
    files.push_back(std::move(file));
  }
  if (ec) {
    return absl::UnavailableError(absl::StrCat("list ", state_dir, ": ", ec.message()));
  }
  std::sort(files.begin(), files.end(),
            [](const StateFile& a, const StateFile& b) { return a.path < b.path; });
  return files;
}

absl::StatusOr<FileDigest> DigestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("open ", path, ": cannot read"));
  base::Sha256Stream sha;
  FileDigest digest;
  std::string chunk(1 << 16, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const std::streamsize got = in.gcount();
    sha.Update(std::string_view(chunk.data(), static_cast<size_t>(got)));
    digest.size += got;
  }
  if (in.bad()) return absl::UnavailableError(absl::StrCat("read ", path, ": I/O error"));
  digest.sha256 = sha.FinalHex();
  return digest;
}

absl::StatusOr<BackupManifest> TakeBackup(const std::string& state_dir,
                                          const std::string& backup_dir) {
  std::error_code ec;
  if (!fs::is_directory(state_dir, ec)) {
    return WithBackupCode(absl::NotFoundError(absl::StrCat("no state directory at ", state_dir)),
                          kStateDirNotFound);
  }
  if (absl::Status s = CheckBackupDir(state_dir, backup_dir); !s.ok()) return s;
  auto files = ListStateFiles(state_dir);
  if (!files.ok()) return files.status();
  BackupManifest manifest;
  manifest.created_at = NowRfc3339();
  manifest.state_dir = fs::absolute(state_dir, ec).string();
  if (absl::Status s = os::MakeDirectories(backup_dir, 0700); !s.ok()) return s;
  std::vector<std::string> directories = {backup_dir};
  for (const StateFile& file : *files) {
    const FileClass kind = file.symlink ? FileClass{FileRole::kOther, "a symbolic link"}
                                        : ClassifyStateFile(file.path, file.sqlite_header);
    if (kind.role == FileRole::kSidecar) continue;
    if (kind.role != FileRole::kDatabase && kind.role != FileRole::kPlainCopy) {
      manifest.not_copied.push_back({file.path, kind.reason});
      continue;
    }
    const std::string source = state_dir + "/" + file.path;
    const std::string dest = backup_dir + "/" + file.path;
    const std::string parent = fs::path(dest).parent_path().string();
    if (absl::Status s = os::MakeDirectories(parent, 0700); !s.ok()) return s;
    if (std::find(directories.begin(), directories.end(), parent) == directories.end()) {
      directories.push_back(parent);
    }
    auto entry = kind.role == FileRole::kDatabase ? CopyDatabase(source, dest, file.path)
                                                  : CopyPlainFile(source, dest, file.path);
    if (!entry.ok()) return entry.status();
    manifest.files.push_back(*std::move(entry));
  }
  // The copies' names must be durable before the manifest says they exist.
  for (const std::string& dir : directories) {
    if (absl::Status s = os::FsyncDirectory(dir); !s.ok()) return s;
  }
  if (absl::Status s = os::WriteFileAtomically(backup_dir + "/" + kManifestName,
                                               ManifestJson(manifest), 0600, os::IfExists::kFail);
      !s.ok()) {
    return s;
  }
  return manifest;
}

}  // namespace aevatar::cli
