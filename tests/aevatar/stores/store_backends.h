#ifndef AEVATAR_TESTS_AEVATAR_STORES_STORE_BACKENDS_H_
#define AEVATAR_TESTS_AEVATAR_STORES_STORE_BACKENDS_H_

#include <functional>
#include <memory>
#include <string>

#include "aevatar/api/store_backend.h"

namespace aevatar::orchestrator {

// One empty place to keep aevatar's state, for the contract suites: the
// service's own StoreBackend over a private temp directory (SQLite) or a
// fresh database on the process's private cluster (PostgreSQL).
class TestBackend {
 public:
  virtual ~TestBackend() = default;
  // Opens each store; several opens on one TestBackend share the state,
  // like a restart (SQLite) or another replica (PostgreSQL).
  virtual const StoreBackend& backend() const = 0;
  // Every byte the backend holds (files, or every aevatar_ table's values,
  // BYTEA as raw bytes), for checks that a secret is not stored in clear.
  virtual std::string RawBytes() const = 0;
};

// Returns a fresh backend, or null after GTEST_SKIP() (PostgreSQL's server
// is not installed) or a test failure.
using TestBackendFactory = std::function<std::unique_ptr<TestBackend>()>;

std::unique_ptr<TestBackend> NewSqliteBackend();
std::unique_ptr<TestBackend> NewPostgresBackend();

// Instantiates the value-parameterised suite `suite` on both backends.
#define AEVATAR_STORE_SUITE_ON_BOTH_BACKENDS(suite)                                       \
  INSTANTIATE_TEST_SUITE_P(Sqlite, suite,                                                 \
                           ::testing::Values(::aevatar::orchestrator::TestBackendFactory( \
                               ::aevatar::orchestrator::NewSqliteBackend)));              \
  INSTANTIATE_TEST_SUITE_P(Postgres, suite,                                               \
                           ::testing::Values(::aevatar::orchestrator::TestBackendFactory( \
                               ::aevatar::orchestrator::NewPostgresBackend)))

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_TESTS_AEVATAR_STORES_STORE_BACKENDS_H_
