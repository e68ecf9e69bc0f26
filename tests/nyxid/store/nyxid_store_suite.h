#ifndef AEVATAR_TESTS_NYXID_STORE_NYXID_STORE_SUITE_H_
#define AEVATAR_TESTS_NYXID_STORE_NYXID_STORE_SUITE_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "gtest/gtest.h"
#include "nyxid/nodes/node_store.h"
#include "nyxid/store/nyxid_store.h"
#include "nyxid/tokens/signing_key_storage.h"

namespace aevatar::nyxid {

// One opening of a backend: what `nyxid serve` opens at start.
struct NyxidStores {
  std::unique_ptr<NyxidStore> store;
  std::unique_ptr<NodeStore> nodes;
  std::unique_ptr<SigningKeyStorage> signing_keys;
};

// Opens the same backend again on each call (a second opening stands for a
// restarted broker, or for another replica on a shared database); null
// stores after a failure (reported) or a GTEST_SKIP().
using NyxidStoresOpener = std::function<NyxidStores()>;

// A backend under test: `make` makes a fresh, empty one and returns its
// opener. It may GTEST_SKIP() (and return an opener of nulls) when the
// backend is not installed.
struct NyxidBackendFactory {
  std::string name;  // shown in test names
  std::function<NyxidStoresOpener()> make;
};
void PrintTo(const NyxidBackendFactory& factory, std::ostream* out);

// The NyxidStore, NodeStore and SigningKeyStorage contract, written once for
// every backend; each backend's test instantiates it with its factory:
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, NyxidStoreSuite,
//                            ::testing::Values(NyxidBackendFactory{"sqlite", MakeSqlite}));
class NyxidStoreSuite : public ::testing::TestWithParam<NyxidBackendFactory> {
 protected:
  void SetUp() override;

  NyxidStoresOpener open_;
  NyxidStores stores_;
  NyxidStore* store() { return stores_.store.get(); }
  NodeStore* nodes() { return stores_.nodes.get(); }
};

// A user with recognisable fields.
User NewUser(const std::string& id, const std::string& username, int64_t created_at_ms = 1000);
// A custom route of `owner` (no catalog service).
UserService NewRoute(const std::string& id, const Owner& owner, const std::string& slug,
                     int64_t created_at_ms = 1000);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_TESTS_NYXID_STORE_NYXID_STORE_SUITE_H_
