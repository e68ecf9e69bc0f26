#ifndef AEVATAR_TESTS_TESTING_POSTGRES_TEST_DATABASE_H_
#define AEVATAR_TESTS_TESTING_POSTGRES_TEST_DATABASE_H_

#include <string>

#include "gtest/gtest.h"
#include "testing/postgres_cluster.h"

// Skips the test when PostgreSQL's server is not installed (scripts/setup
// installs it); fails it when the process's private cluster did not start.
// For a TEST body (it returns from the function it stands in).
#define SKIP_WITHOUT_POSTGRES()                                          \
  if (!::aevatar::testing::SharedPostgresCluster().installed())          \
    GTEST_SKIP() << ::aevatar::testing::SharedPostgresCluster().error(); \
  ASSERT_TRUE(::aevatar::testing::SharedPostgresCluster().ok())          \
      << ::aevatar::testing::SharedPostgresCluster().error()

namespace aevatar::testing {

// Marks the running test skipped when PostgreSQL's server is not installed.
// For helpers and fixtures: the caller checks Test::IsSkipped() after it.
inline void SkipWithoutPostgres() {
  if (!SharedPostgresCluster().installed()) GTEST_SKIP() << SharedPostgresCluster().error();
}

// A new empty database on the process's private cluster: its libpq URI, or
// "" after SkipWithoutPostgres() skipped or after a recorded failure.
inline std::string FreshPostgresDatabase() {
  SkipWithoutPostgres();
  PostgresCluster& cluster = SharedPostgresCluster();
  if (!cluster.installed()) return "";
  EXPECT_TRUE(cluster.ok()) << cluster.error();
  if (!cluster.ok()) return "";
  std::string url = cluster.CreateDatabase();
  EXPECT_FALSE(url.empty()) << cluster.error();
  return url;
}

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_POSTGRES_TEST_DATABASE_H_
