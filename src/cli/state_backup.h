#ifndef AEVATAR_CLI_STATE_BACKUP_H_
#define AEVATAR_CLI_STATE_BACKUP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/backup_manifest.h"

// `aevatar backup` / `aevatar restore` on a state directory: the layout of
// `aevatar up` (nyxid/, chrono-sandbox/, aevatar/ under one directory) or
// the state directory of one `serve`. Theory of operation:
//
//   backup   walks the state directory; each SQLite database is copied with
//            the online backup API (a consistent snapshot while the services
//            keep writing), each plain file the stack needs byte for byte;
//            keys are never copied. manifest.json, written last, lists every
//            copy with its size, SHA-256 and schema version, and every file
//            left out with the reason. A directory without a manifest is an
//            unfinished backup.
//   restore  checks every digest first (nothing is touched when one fails),
//            then takes an exclusive SQLite lock on every database of the
//            state directory (a running service holds a lock on each
//            database it has open, so this refuses while one runs, and no
//            service can open a file half-way), then copies each database
//            back into its file, as one transaction per file.
//
// Failures carry a typed error code (BackupErrorCode) for the command line.
namespace aevatar::cli {

// The largest plain file (runner.id) a backup copies.
inline constexpr size_t kMaxPlainFileBytes = 64 * 1024;

// Typed error codes.
inline constexpr char kStateDirNotFound[] = "STATE_DIR_NOT_FOUND";
inline constexpr char kBackupDirNotEmpty[] = "BACKUP_DIR_NOT_EMPTY";
inline constexpr char kBackupDirInStateDir[] = "BACKUP_DIR_INSIDE_STATE_DIR";
inline constexpr char kBackupNotFound[] = "BACKUP_NOT_FOUND";
inline constexpr char kManifestInvalid[] = "BACKUP_MANIFEST_INVALID";
inline constexpr char kDigestMismatch[] = "BACKUP_DIGEST_MISMATCH";
inline constexpr char kStateDirInUse[] = "STATE_DIR_IN_USE";
inline constexpr char kStateNewerThanBackup[] = "STATE_HAS_DATABASES_NOT_IN_BACKUP";
inline constexpr char kBackupFailed[] = "BACKUP_FAILED";
inline constexpr char kRestoreFailed[] = "RESTORE_FAILED";

// The typed code `status` carries; `fallback` when it carries none.
std::string BackupErrorCode(const absl::Status& status, std::string_view fallback);

// Copies the state directory `state_dir` into `backup_dir`, which must not
// exist or be empty (kBackupDirNotEmpty) and must not lie inside the state
// directory (kBackupDirInStateDir). Safe while the services run. Returns the
// manifest it wrote.
absl::StatusOr<BackupManifest> TakeBackup(const std::string& state_dir,
                                          const std::string& backup_dir);

// Reads `backup_dir`'s manifest and checks every listed file's size and
// SHA-256 (kBackupNotFound, kManifestInvalid, kDigestMismatch). Returns the
// manifest when every file matches.
absl::StatusOr<BackupManifest> VerifyBackup(const std::string& backup_dir);

// Verifies `backup_dir`, then puts its files back into `state_dir` (created
// 0700 when missing). Refuses, changing nothing, while a process has any of
// the state directory's databases open (kStateDirInUse) and when the state
// directory holds a database the backup does not (kStateNewerThanBackup).
// Files the backup did not copy (keys) are left as they are.
absl::StatusOr<BackupManifest> RestoreBackup(const std::string& backup_dir,
                                             const std::string& state_dir);

// For the implementation files: `status` with the typed `code` attached.
absl::Status WithBackupCode(absl::Status status, std::string_view code);

// For the implementation files: the regular files of `state_dir` (no symbolic
// links), as '/'-separated paths relative to it, in sorted order; with
// whether each starts with the SQLite header.
struct StateFile {
  std::string path;
  bool sqlite_header = false;
  bool symlink = false;
};
absl::StatusOr<std::vector<StateFile>> ListStateFiles(const std::string& state_dir);

// For the implementation files: the size and SHA-256 of the file at `path`.
struct FileDigest {
  int64_t size = 0;
  std::string sha256;
};
absl::StatusOr<FileDigest> DigestFile(const std::string& path);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_STATE_BACKUP_H_
