#ifndef AEVATAR_CLI_BACKUP_MANIFEST_H_
#define AEVATAR_CLI_BACKUP_MANIFEST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

// The manifest of an `aevatar backup` (manifest.json in the backup
// directory), and which files of a state directory a backup takes.
//
// A backup holds every SQLite database of the state directory (copied with
// the SQLite online backup API) and the few plain files the stack needs that
// are not secret; it never holds a key. Each copied file is listed with its
// size and SHA-256, each database also with its schema version (PRAGMA
// user_version), and every file left out is listed with the reason, so an
// operator sees what to keep elsewhere.
namespace aevatar::cli {

inline constexpr char kManifestFormat[] = "aevatar-backup/1";
inline constexpr char kManifestName[] = "manifest.json";

// What a backup does with one file of the state directory.
enum class FileRole {
  kDatabase,     // copied through SQLite's online backup
  kPlainCopy,    // copied byte for byte (small, not secret: runner.id)
  kSecret,       // never copied: a key; the reason says how to keep it
  kRegenerated,  // not copied: written again at every start
  kOther,        // not copied: not part of the stack's state
  kSidecar,      // a database's -wal/-shm/-journal: inside its database's copy
};

struct FileClass {
  FileRole role;
  std::string reason;  // for the roles that are not copied
};

// Classifies `relative_path` (a regular file of the state directory, '/'
// separated); `sqlite_header` is whether it starts with SQLite's magic.
FileClass ClassifyStateFile(std::string_view relative_path, bool sqlite_header);

// One copied file.
struct ManifestEntry {
  std::string path;  // relative to the state directory and to the backup directory
  bool database = false;
  int64_t schema_version = 0;  // databases only
  int64_t size = 0;
  std::string sha256;  // 64 lowercase hex digits
};

// One file of the state directory the backup did not copy.
struct NotCopied {
  std::string path;
  std::string reason;
};

struct BackupManifest {
  std::string created_at;  // UTC, RFC 3339
  std::string state_dir;   // absolute path the backup was taken from (informational)
  std::vector<ManifestEntry> files;
  std::vector<NotCopied> not_copied;
};

// The manifest as pretty-printed JSON.
std::string ManifestJson(const BackupManifest& manifest);

// Parses a manifest read from a backup directory. The directory may have
// been edited or damaged, so every field is read with its type checked and
// every path must be a plain relative path inside the directory (no "..",
// no absolute path, no empty segment): InvalidArgument naming the field
// otherwise.
absl::StatusOr<BackupManifest> ParseManifest(std::string_view json);

// Whether `path` is a relative, '/'-separated path with no empty, "." or
// ".." segment and no NUL: safe to join under a directory.
bool IsSafeRelativePath(std::string_view path);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_BACKUP_MANIFEST_H_
