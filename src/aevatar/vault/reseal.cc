#include "aevatar/vault/reseal.h"

#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/crypto.h"
#include "store/sqlite_db.h"

namespace aevatar::orchestrator {
namespace {

constexpr int64_t kBatchRows = 128;

// The open database of `column`, or nullopt when its file or table does not
// exist yet (nothing sealed there).
absl::StatusOr<std::optional<store::Database>> OpenColumnFile(const std::string& state_dir,
                                                              const SealedColumn& column) {
  const std::string path = absl::StrCat(state_dir, "/", column.file);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::optional<store::Database>();
  auto db = store::Database::Open(path);
  if (!db.ok()) return db.status();
  auto tables = db->QueryInt64(
      "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", {column.table});
  if (!tables.ok()) return tables.status();
  if (*tables == 0) return std::optional<store::Database>();
  return std::optional<store::Database>(*std::move(db));
}

// The next rows of `column` after primary key `after`, in key order.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> NextBatch(
    store::Database& db, const SealedColumn& column, const std::string& after) {
  auto stmt =
      db.Prepare(absl::StrCat("SELECT ", column.key, ", ", column.blob, " FROM ", column.table,
                              " WHERE ", column.key, " > ?1 AND ", column.blob,
                              " IS NOT NULL ORDER BY ", column.key, " LIMIT ?2"),
                 {after, kBatchRows});
  if (!stmt.ok()) return stmt.status();
  std::vector<std::pair<std::string, std::string>> rows;
  for (;;) {
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return rows;
    rows.emplace_back(stmt->ColumnText(0), stmt->ColumnBlob(1));
  }
}

}  // namespace

absl::StatusOr<ResealCount> ResealColumn(const std::string& state_dir, const SealedColumn& column,
                                         const VaultKeyring& keyring,
                                         std::string_view retiring_key) {
  ResealCount count;
  auto db = OpenColumnFile(state_dir, column);
  if (!db.ok()) return db.status();
  if (!db->has_value()) return count;
  const std::string update =
      absl::StrCat("UPDATE ", column.table, " SET ", column.blob, " = ?1 WHERE ", column.key,
                   " = ?2 AND ", column.blob, " = ?3");
  std::string after;
  for (;;) {
    auto batch = NextBatch(**db, column, after);
    if (!batch.ok()) return batch.status();
    if (batch->empty()) return count;
    for (const auto& [key, sealed] : *batch) {
      after = key;
      if (keyring.OpensWithCurrent(sealed)) {
        ++count.current;
        continue;
      }
      auto plain = base::SecretBoxOpen(retiring_key, sealed);
      if (!plain.ok()) {
        return absl::DataLossError(absl::StrCat("a sealed value in ", column.file, " (",
                                                column.table, ") opens under neither vault key"));
      }
      auto changed =
          (*db)->Run(update, {store::Blob(keyring.Seal(*plain)), key, store::Blob(sealed)});
      if (!changed.ok()) return changed.status();
      if (*changed == 1) {
        ++count.resealed;
      } else {
        ++count.raced;  // the service rewrote it: the next pass looks again
      }
    }
  }
}

absl::Status CompactSealedFiles(const std::string& state_dir) {
  for (const SealedColumn& column : kSealedColumns) {
    auto db = OpenColumnFile(state_dir, column);
    if (!db.ok()) return db.status();
    if (!db->has_value()) continue;
    if (absl::Status st = (*db)->Exec("VACUUM"); !st.ok()) return st;
    auto checkpoint = (*db)->Prepare("PRAGMA wal_checkpoint(TRUNCATE)");
    if (!checkpoint.ok()) return checkpoint.status();
    auto row = checkpoint->Step();
    if (!row.ok()) return row.status();
    if (*row && checkpoint->ColumnInt64(0) != 0) {
      return absl::UnavailableError(
          absl::StrCat("the write-ahead log of ", column.file, " could not be checkpointed"));
    }
  }
  return absl::OkStatus();
}

}  // namespace aevatar::orchestrator
