#include "store/store_spec.h"

#include "gtest/gtest.h"

namespace aevatar::store {
namespace {

TEST(PostgresConninfo, LibpqUrisAreKeptWhole) {
  EXPECT_EQ(PostgresConninfo("postgresql://u:pw@127.0.0.1:5432/db"),
            "postgresql://u:pw@127.0.0.1:5432/db");
  EXPECT_EQ(PostgresConninfo("postgres://u@host/db"), "postgres://u@host/db");
}

TEST(PostgresConninfo, ThePostgresPrefixIsStrippedFromKeyValueStrings) {
  EXPECT_EQ(PostgresConninfo("postgres:host=/run/pg dbname=a"), "host=/run/pg dbname=a");
  EXPECT_EQ(PostgresConninfo("postgres:postgresql://u@h/db"), "postgresql://u@h/db");
}

TEST(PostgresConninfo, OtherSpecsNameNoDatabase) {
  for (const char* spec :
       {"", "sqlite", "sqlite:/var/lib/x.db", "Postgres://u@h/db", "pg://h", "mysql://u@h/db"}) {
    EXPECT_EQ(PostgresConninfo(spec), std::nullopt) << spec;
  }
}

}  // namespace
}  // namespace aevatar::store
