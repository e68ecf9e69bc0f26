#include "testing/sealed_state.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "aevatar/vault/reseal.h"
#include "gtest/gtest.h"
#include "store/sqlite_db.h"

namespace aevatar::testing {

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<std::string> SealedValues(const std::string& state) {
  std::vector<std::string> values;
  for (const orchestrator::SealedColumn& column : orchestrator::kSealedColumns) {
    const std::string path = state + "/" + column.file;
    if (!std::filesystem::exists(path)) continue;
    auto db = store::Database::Open(path);
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) continue;
    auto stmt = db->Prepare(std::string("SELECT ") + column.blob + " FROM " + column.table);
    EXPECT_TRUE(stmt.ok()) << stmt.status();
    if (!stmt.ok()) continue;
    while (stmt->Step().value_or(false)) values.push_back(stmt->ColumnBlob(0));
  }
  return values;
}

}  // namespace aevatar::testing
