// PostgreSQL for tests (style rule 47). Tests get the server's superuser DSN from the ctest
// fixture `postgres` (tests/pg_fixture), or from GPUAAS_TEST_PG_DSN when run by hand, and each
// test gets a database of its own:
//
//   class RepoTest : public gpuaas::testing::PgTest {};
//   TEST_F(RepoTest, Creates) {
//     ASSERT_OK_AND_ASSIGN(auto pool, MakePool());
//     ...
//   }
//
// Without a DSN a PgTest is skipped with a message saying how to provide one, except under
// CI=true, where it fails: CI must never pass by skipping.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "libs/db/db.h"
#include "libs/testing/ci_skip.h"

namespace gpuaas::testing {

// The superuser DSN: env GPUAAS_TEST_PG_DSN, else the first line of the file named by
// GPUAAS_TEST_PG_DSN_FILE (written by the fixture). Empty when neither gives one.
std::string GetDsnFromEnv();

// Returns `dsn` pointed at database `dbname`. Does not block.
std::string DsnForDatabase(const std::string& dsn, const std::string& dbname);

// A fresh, empty database `t_<random>` per test, dropped (WITH (FORCE), so leftover
// connections do not block it) in TearDown, with the services' roles made on it by ServiceDsn
// (libs/testing/service_dsn.h).
class PgTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // DSN of this test's database.
  const std::string& dsn() const { return dsn_; }
  // Superuser DSN of the server (its `postgres` database).
  const std::string& admin_dsn() const { return admin_dsn_; }
  const std::string& database() const { return database_; }

  // A pool on this test's database with short timeouts suited to tests.
  absl::StatusOr<std::unique_ptr<db::Pool>> MakePool(int size = 4);

 private:
  std::string admin_dsn_;
  std::string database_;
  std::string dsn_;
};

}  // namespace gpuaas::testing
