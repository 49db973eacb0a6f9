// MapException's table, with each database error provoked for real where it can be.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libs/db/db.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::db {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class ErrorMappingTest : public ::gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK_AND_ASSIGN(pool_, MakePool());
    ASSERT_OK(pool_->RunInTransaction("schema", [](Tx& tx) {
      tx.Exec("CREATE TABLE parents (id bigint PRIMARY KEY)");
      tx.Exec(
          "CREATE TABLE children (id bigint PRIMARY KEY, "
          "parent_id bigint CONSTRAINT children_parent_fk REFERENCES parents, "
          "email text CONSTRAINT children_email_key UNIQUE, "
          "age int CONSTRAINT children_age_check CHECK (age >= 0))");
      tx.Exec("INSERT INTO parents VALUES (1)");
      tx.Exec("INSERT INTO children VALUES (1, 1, 'secret@example.com', 3)");
      return absl::OkStatus();
    }));
  }

  absl::Status Run(const std::string& sql) {
    return pool_->RunInTransaction("provoke", [&](Tx& tx) {
      tx.Exec(sql);
      return absl::OkStatus();
    });
  }

  std::unique_ptr<Pool> pool_;
};

TEST_F(ErrorMappingTest, UniqueViolationIsAlreadyExistsNamingTheConstraintOnly) {
  EXPECT_THAT(Run("INSERT INTO children VALUES (2, 1, 'secret@example.com', 3)"),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       AllOf(HasSubstr("children_email_key"), Not(HasSubstr("secret")))));
}

TEST_F(ErrorMappingTest, CheckViolationIsInvalidArgument) {
  EXPECT_THAT(Run("INSERT INTO children VALUES (2, 1, 'b', -1)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("children_age_check")));
}

TEST_F(ErrorMappingTest, ForeignKeyViolationIsFailedPrecondition) {
  EXPECT_THAT(Run("INSERT INTO children VALUES (2, 42, 'b', 1)"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("children_parent_fk")));
}

TEST_F(ErrorMappingTest, StatementTimeoutIsDeadlineExceeded) {
  PoolOptions options;
  options.dsn = dsn();
  options.statement_timeout = absl::Milliseconds(50);
  ASSERT_OK_AND_ASSIGN(auto pool, Pool::Create(options));
  EXPECT_THAT(pool->RunInTransaction("sleep",
                                     [](Tx& tx) {
                                       tx.Exec("SELECT pg_sleep(30)");
                                       return absl::OkStatus();
                                     }),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
}

TEST_F(ErrorMappingTest, OtherSqlErrorsAreInternalWithSqlState) {
  EXPECT_THAT(Run("SELECT * FROM no_such_table"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("42P01")));
}

TEST_F(ErrorMappingTest, UnreachableServerIsUnavailable) {
  PoolOptions options;
  // Port 1 on loopback: nothing listens, so the connect is refused at once.
  options.dsn = "postgresql://postgres@127.0.0.1:1/postgres";
  ASSERT_OK_AND_ASSIGN(auto pool, Pool::Create(options));
  EXPECT_THAT(pool->RunInTransaction("noop", [](Tx&) { return absl::OkStatus(); }),
              StatusIs(absl::StatusCode::kUnavailable));
}

TEST(MapExceptionTest, MapsClientSideErrors) {
  EXPECT_THAT(MapException(pqxx::in_doubt_error("lost during commit")),
              StatusIs(absl::StatusCode::kUnknown));
  EXPECT_THAT(MapException(pqxx::statement_completion_unknown("?")),
              StatusIs(absl::StatusCode::kUnknown));
  EXPECT_THAT(MapException(pqxx::serialization_failure("conflict")),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(MapException(pqxx::deadlock_detected("deadlock")),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(MapException(pqxx::broken_connection("gone")),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(MapException(pqxx::too_many_connections("full")),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(MapException(pqxx::sql_error("canceled", "SELECT 1", "57014")),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_THAT(MapException(pqxx::sql_error("terminating", "SELECT 1", "57P01")),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(MapException(pqxx::sql_error("cannot execute UPDATE in a read-only transaction",
                                           "UPDATE t SET x = 1", "25006")),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(MapException(pqxx::conversion_error("bad int")),
              StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(MapException(std::runtime_error("boom")), StatusIs(absl::StatusCode::kInternal));
}

TEST(MapExceptionTest, NeverEchoesTheQuery) {
  absl::Status s = MapException(pqxx::sql_error("ERROR: oops", "SELECT 'hunter2'", "XX000"));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal, Not(HasSubstr("hunter2"))));
}

}  // namespace
}  // namespace gpuaas::db
