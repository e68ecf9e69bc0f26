// aevatar restore: verify a backup, then put its files back while no service
// has the state directory open.
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/crypto.h"
#include "cli/state_backup.h"
#include "os/atomic_file.h"
#include "store/sqlite_backup.h"

namespace aevatar::cli {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxManifestBytes = 4 << 20;
// A running service's lock is held for as long as it runs: a short wait
// suffices to tell it apart from a process that is just letting go.
constexpr int kLockWaitMs = 1000;

// Opens every database the restore writes, exclusively: the files that exist
// first (a running service holds one of them), then the missing ones.
struct LockedDatabase {
  const ManifestEntry* entry;
  store::ExclusiveDatabase db;
};

absl::StatusOr<std::vector<LockedDatabase>> LockDatabases(const BackupManifest& manifest,
                                                          const std::string& state_dir) {
  std::vector<LockedDatabase> locked;
  for (bool existing : {true, false}) {
    for (const ManifestEntry& entry : manifest.files) {
      if (!entry.database) continue;
      const std::string path = state_dir + "/" + entry.path;
      std::error_code ec;
      if (fs::exists(path, ec) != existing) continue;
      if (!existing) {
        if (absl::Status s = os::MakeDirectories(fs::path(path).parent_path().string(), 0700);
            !s.ok()) {
          return s;
        }
      }
      auto db = store::ExclusiveDatabase::Open(path, kLockWaitMs);
      if (!db.ok()) {
        if (db.status().code() != absl::StatusCode::kUnavailable) return db.status();
        return WithBackupCode(
            absl::FailedPreconditionError(absl::StrCat(
                "a service is running on ", state_dir, " (", db.status().message(),
                "); stop `aevatar up` (or every serve on this state directory) first")),
            kStateDirInUse);
      }
      locked.push_back({&entry, *std::move(db)});
    }
  }
  return locked;
}

// Databases in the state directory that the backup does not hold: restoring
// around them would mix state from after the backup with the backup's.
absl::Status CheckNoNewerDatabases(const BackupManifest& manifest, const std::string& state_dir) {
  std::error_code ec;
  if (!fs::exists(state_dir, ec)) return absl::OkStatus();
  auto files = ListStateFiles(state_dir);
  if (!files.ok()) return files.status();
  std::set<std::string> in_backup;
  for (const ManifestEntry& entry : manifest.files) in_backup.insert(entry.path);
  std::vector<std::string> extra;
  for (const StateFile& file : *files) {
    if (file.symlink) continue;
    if (ClassifyStateFile(file.path, file.sqlite_header).role != FileRole::kDatabase) continue;
    if (!in_backup.contains(file.path)) extra.push_back(file.path);
  }
  if (extra.empty()) return absl::OkStatus();
  return WithBackupCode(
      absl::FailedPreconditionError(absl::StrCat(
          "the state directory holds databases the backup does not (", absl::StrJoin(extra, ", "),
          "); move them out of ", state_dir, " first if the backup is what you want")),
      kStateNewerThanBackup);
}

absl::Status RestoreDatabase(store::ExclusiveDatabase& db, const std::string& source,
                             const ManifestEntry& entry) {
  if (absl::Status s = db.RestoreFrom(source); !s.ok()) return s;
  auto version = db.SchemaVersion();
  if (!version.ok()) return version.status();
  if (*version != entry.schema_version) {
    return absl::DataLossError(absl::StrCat(entry.path, " restored at schema version ", *version,
                                            ", the manifest says ", entry.schema_version));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BackupManifest> VerifyBackup(const std::string& backup_dir) {
  const std::string manifest_path = backup_dir + "/" + kManifestName;
  auto text = os::ReadSmallFile(manifest_path, kMaxManifestBytes);
  if (!text.ok()) {
    return WithBackupCode(
        absl::NotFoundError(absl::StrCat("no readable ", manifest_path,
                                         ": not a backup, or one that did not finish (",
                                         text.status().message(), ")")),
        kBackupNotFound);
  }
  auto manifest = ParseManifest(*text);
  if (!manifest.ok()) {
    return WithBackupCode(
        absl::InvalidArgumentError(absl::StrCat(manifest_path, ": ", manifest.status().message())),
        kManifestInvalid);
  }
  for (const ManifestEntry& entry : manifest->files) {
    auto digest = DigestFile(backup_dir + "/" + entry.path);
    std::string problem;
    if (!digest.ok()) {
      problem = "is missing";
    } else if (digest->size != entry.size) {
      problem = absl::StrCat("has ", digest->size, " bytes, the manifest says ", entry.size);
    } else if (digest->sha256 != entry.sha256) {
      problem = "does not match its SHA-256 in the manifest";
    }
    if (!problem.empty()) {
      return WithBackupCode(absl::DataLossError(absl::StrCat(entry.path, " in ", backup_dir, " ",
                                                             problem, "; nothing was restored")),
                            kDigestMismatch);
    }
  }
  return manifest;
}

absl::StatusOr<BackupManifest> RestoreBackup(const std::string& backup_dir,
                                             const std::string& state_dir) {
  auto manifest = VerifyBackup(backup_dir);
  if (!manifest.ok()) return manifest.status();
  if (absl::Status s = CheckNoNewerDatabases(*manifest, state_dir); !s.ok()) return s;
  if (absl::Status s = os::MakeDirectories(state_dir, 0700); !s.ok()) return s;
  // Held until the end: no service can open a database while it is replaced.
  auto locked = LockDatabases(*manifest, state_dir);
  if (!locked.ok()) return locked.status();
  for (LockedDatabase& target : *locked) {
    const std::string source = backup_dir + "/" + target.entry->path;
    if (absl::Status s = RestoreDatabase(target.db, source, *target.entry); !s.ok()) return s;
  }
  for (const ManifestEntry& entry : manifest->files) {
    if (entry.database) continue;
    auto bytes = os::ReadSmallFile(backup_dir + "/" + entry.path, kMaxPlainFileBytes);
    if (!bytes.ok()) return bytes.status();
    // Checked again: the file is read a second time after VerifyBackup.
    if (base::Sha256Hex(*bytes) != entry.sha256) {
      return WithBackupCode(
          absl::DataLossError(absl::StrCat(entry.path, " changed during the restore")),
          kDigestMismatch);
    }
    const std::string dest = state_dir + "/" + entry.path;
    if (absl::Status s = os::MakeDirectories(fs::path(dest).parent_path().string(), 0700);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = os::WriteFileAtomically(dest, *bytes, 0600); !s.ok()) return s;
  }
  return manifest;
}

}  // namespace aevatar::cli
