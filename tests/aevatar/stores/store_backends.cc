#include "stores/store_backends.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "store/pg_pool.h"
#include "testing/postgres_test_database.h"

namespace aevatar::orchestrator {
namespace {

namespace fs = std::filesystem;

class SqliteTestBackend final : public TestBackend {
 public:
  SqliteTestBackend(std::string dir, StoreBackend backend)
      : dir_(std::move(dir)), backend_(std::move(backend)) {}
  ~SqliteTestBackend() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const StoreBackend& backend() const override { return backend_; }
  std::string RawBytes() const override {
    std::stringstream bytes;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir_)) {
      bytes << std::ifstream(entry.path(), std::ios::binary).rdbuf();
    }
    return bytes.str();
  }

 private:
  std::string dir_;
  StoreBackend backend_;
};

class PostgresTestBackend final : public TestBackend {
 public:
  PostgresTestBackend(std::unique_ptr<store::PgPool> admin, StoreBackend backend)
      : admin_(std::move(admin)), backend_(std::move(backend)) {}
  const StoreBackend& backend() const override { return backend_; }
  std::string RawBytes() const override {
    std::string bytes;
    absl::Status read = admin_->Transact([&](pqxx::work& tx) {
      pqxx::result columns = tx.exec(
          "SELECT table_name, column_name, data_type FROM information_schema.columns "
          "WHERE table_name LIKE 'aevatar\\_%'");
      for (const pqxx::row& column : columns) {
        const std::string table = column[0].as<std::string>();
        const std::string name = column[1].as<std::string>();
        const bool binary = column[2].as<std::string>() == "bytea";
        pqxx::result values = tx.exec("SELECT " + tx.quote_name(name) + (binary ? "" : "::text") +
                                      " FROM " + tx.quote_name(table));
        for (const pqxx::row& value : values) {
          if (value[0].is_null()) continue;
          bytes += binary ? pqxx::binarystring(value[0]).str() : value[0].as<std::string>();
        }
      }
      return absl::OkStatus();
    });
    EXPECT_TRUE(read.ok()) << read;
    return bytes;
  }

 private:
  std::unique_ptr<store::PgPool> admin_;
  StoreBackend backend_;
};

}  // namespace

std::unique_ptr<TestBackend> NewSqliteBackend() {
  std::string dir = (fs::temp_directory_path() / "aevatar_stores.XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp";
    return nullptr;
  }
  auto backend = StoreBackend::Open("sqlite", dir);
  EXPECT_TRUE(backend.ok()) << backend.status();
  if (!backend.ok()) return nullptr;
  return std::make_unique<SqliteTestBackend>(dir, *std::move(backend));
}

std::unique_ptr<TestBackend> NewPostgresBackend() {
  const std::string url = testing::FreshPostgresDatabase();
  if (url.empty()) return nullptr;
  auto admin = store::PgPool::Connect(url, 1);
  EXPECT_TRUE(admin.ok()) << admin.status();
  auto backend = StoreBackend::Open(url, "");
  EXPECT_TRUE(backend.ok()) << backend.status();
  if (!admin.ok() || !backend.ok()) return nullptr;
  return std::make_unique<PostgresTestBackend>(std::move(*admin), *std::move(backend));
}

}  // namespace aevatar::orchestrator
