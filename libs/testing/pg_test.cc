#include "libs/testing/pg_test.h"

#include <cstdlib>
#include <fstream>
#include <random>

#include "absl/strings/str_cat.h"
#include "libs/db/dsn.h"
#include "libs/testing/service_dsn.h"

namespace gpuaas::testing {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string RandomDatabaseName() {
  // Uniqueness, not reproducibility: several test binaries share one server.
  std::random_device seed;
  std::mt19937_64 gen((static_cast<uint64_t>(seed()) << 32) ^ seed());
  return absl::StrCat("t_", absl::Hex(gen(), absl::kZeroPad16));
}

}  // namespace

std::string GetDsnFromEnv() {
  if (std::string dsn = Env("GPUAAS_TEST_PG_DSN"); !dsn.empty()) return dsn;
  const std::string file = Env("GPUAAS_TEST_PG_DSN_FILE");
  if (file.empty()) return "";
  std::ifstream in(file);
  std::string dsn;
  std::getline(in, dsn);
  return dsn;
}

std::string DsnForDatabase(const std::string& dsn, const std::string& dbname) {
  return db::WithDsnParam(dsn, "dbname", dbname);
}

void PgTest::SetUp() {
  admin_dsn_ = GetDsnFromEnv();
  if (admin_dsn_.empty()) {
    constexpr const char* kHow =
        "no PostgreSQL DSN: run through ctest (fixture `postgres`), or set GPUAAS_TEST_PG_DSN, "
        "e.g. from `tools/pg-cluster --fast start /tmp/pg 5433`";
    GPUAAS_SKIP_OR_FAIL_IN_CI() << kHow;
  }
  database_ = RandomDatabaseName();
  if (absl::Status s = db::ExecWithoutTransaction(admin_dsn_, "CREATE DATABASE " + database_);
      !s.ok()) {
    database_.clear();
    FAIL() << "creating the test database on " << admin_dsn_ << ": " << s;
  }
  dsn_ = DsnForDatabase(admin_dsn_, database_);
}

void PgTest::TearDown() {
  if (database_.empty()) return;
  const std::string drop = "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)";
  if (absl::Status s = db::ExecWithoutTransaction(admin_dsn_, drop); !s.ok()) {
    ADD_FAILURE() << "dropping test database " << database_ << ": " << s;
    return;
  }
  // Roles are the cluster's, not the database's: those ServiceDsn made for it go now.
  if (std::string error = DropServiceRoles(admin_dsn_, database_); !error.empty()) {
    ADD_FAILURE() << "dropping the service roles of " << database_ << ": " << error;
  }
}

absl::StatusOr<std::unique_ptr<db::Pool>> PgTest::MakePool(int size) {
  db::PoolOptions options;
  options.dsn = dsn_;
  options.size = size;
  options.acquire_timeout = absl::Seconds(10);
  options.statement_timeout = absl::Seconds(30);
  return db::Pool::Create(std::move(options));
}

}  // namespace gpuaas::testing
