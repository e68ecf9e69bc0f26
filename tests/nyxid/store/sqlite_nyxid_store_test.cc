// The NyxID store contract (nyxid_store_suite.h) on SQLite: the files
// `nyxid serve` keeps in its state dir.
#include <filesystem>
#include <memory>
#include <string>

#include "nyxid_store_suite.h"

namespace aevatar::nyxid {
namespace {

// A state dir per backend, removed when the last opener copy goes.
class SqliteStateDir {
 public:
  SqliteStateDir() {
    char tmpl[] = "/tmp/nyxid-store.XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~SqliteStateDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

NyxidStoresOpener MakeSqlite() {
  auto dir = std::make_shared<SqliteStateDir>();
  return [dir] {
    NyxidStores stores;
    auto store = OpenSqliteNyxidStore(dir->path() + "/nyxid.db", std::string(32, 'k'));
    EXPECT_TRUE(store.ok()) << store.status();
    auto nodes = OpenSqliteNodeStore(dir->path() + "/nodes.db");
    EXPECT_TRUE(nodes.ok()) << nodes.status();
    if (!store.ok() || !nodes.ok()) return stores;
    stores.store = std::move(*store);
    stores.nodes = std::move(*nodes);
    stores.signing_keys = FileSigningKeyStorage(dir->path());
    return stores;
  };
}

INSTANTIATE_TEST_SUITE_P(Sqlite, NyxidStoreSuite,
                         ::testing::Values(NyxidBackendFactory{"sqlite", MakeSqlite}));

}  // namespace
}  // namespace aevatar::nyxid
