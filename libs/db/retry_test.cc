// RunInTransaction's retry on real serialization failures, deadlocks and stale statements.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>

#include "libs/db/db.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::db {
namespace {

using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

class RetryTest : public ::gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK_AND_ASSIGN(pool_, MakePool());
    ASSERT_OK(pool_->RunInTransaction("schema", [](Tx& tx) {
      tx.Exec("CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)");
      tx.Exec("INSERT INTO accounts VALUES (1, 100), (2, 100)");
      return absl::OkStatus();
    }));
  }

  // Classic write skew: each transaction reads both rows, then debits one. Both read before
  // either writes (the latch, first attempt only), so SERIALIZABLE must fail one of them.
  absl::Status Withdraw(int id, std::latch& both_read, std::atomic<int>& attempts,
                        RetryOptions retry) {
    bool first = true;
    return pool_->RunInTransaction(
        "withdraw",
        [&](Tx& tx) {
          ++attempts;
          const int total = tx.Exec("SELECT sum(balance) FROM accounts")[0].Get<int>(0);
          if (first) {
            first = false;
            both_read.arrive_and_wait();
          }
          if (total < 150) return absl::FailedPreconditionError("insufficient funds");
          tx.Exec("UPDATE accounts SET balance = balance - 150 WHERE id = $1", id);
          return absl::OkStatus();
        },
        /*serializable=*/true, retry);
  }

  absl::StatusOr<int> Total() {
    return pool_->Read<int>("total", [](Tx& tx) -> absl::StatusOr<int> {
      return tx.Exec("SELECT sum(balance) FROM accounts")[0].Get<int>(0);
    });
  }

  std::unique_ptr<Pool> pool_;
};

TEST_F(RetryTest, SerializationFailureIsRetriedOnAFreshAttempt) {
  std::latch both_read(2);
  std::atomic<int> attempts{0};
  absl::Status s1, s2;
  std::thread t1([&] { s1 = Withdraw(1, both_read, attempts, {}); });
  std::thread t2([&] { s2 = Withdraw(2, both_read, attempts, {}); });
  t1.join();
  t2.join();
  // The loser's retry sees the winner's debit and refuses: exactly one withdrawal happened.
  EXPECT_EQ(s1.ok() + s2.ok(), 1) << s1 << " / " << s2;
  EXPECT_TRUE(absl::IsFailedPrecondition(s1.ok() ? s2 : s1));
  EXPECT_EQ(attempts.load(), 3);
  EXPECT_THAT(Total(), IsOkAndHolds(50));
}

TEST_F(RetryTest, ConflictLeftAfterRetriesIsAborted) {
  std::latch both_read(2);
  std::atomic<int> attempts{0};
  absl::Status s1, s2;
  std::thread t1([&] { s1 = Withdraw(1, both_read, attempts, {.max_attempts = 1}); });
  std::thread t2([&] { s2 = Withdraw(2, both_read, attempts, {.max_attempts = 1}); });
  t1.join();
  t2.join();
  EXPECT_EQ(s1.ok() + s2.ok(), 1) << s1 << " / " << s2;
  EXPECT_THAT(s1.ok() ? s2 : s1, StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(attempts.load(), 2);
}

TEST_F(RetryTest, DeadlockIsRetried) {
  // Each transaction locks one row, waits for the other to do the same, then wants the
  // other's row: PostgreSQL kills one (40P01) and the retry goes through.
  std::latch both_locked(2);
  std::atomic<int> attempts{0};
  auto cross = [&](int mine, int theirs) {
    bool first = true;
    return pool_->RunInTransaction("cross", [&](Tx& tx) {
      ++attempts;
      tx.Exec("UPDATE accounts SET balance = balance + 1 WHERE id = $1", mine);
      if (first) {
        first = false;
        both_locked.arrive_and_wait();
      }
      tx.Exec("UPDATE accounts SET balance = balance + 1 WHERE id = $1", theirs);
      return absl::OkStatus();
    });
  };
  absl::Status s1, s2;
  std::thread t1([&] { s1 = cross(1, 2); });
  std::thread t2([&] { s2 = cross(2, 1); });
  t1.join();
  t2.join();
  EXPECT_OK(s1);
  EXPECT_OK(s2);
  EXPECT_EQ(attempts.load(), 3);
  EXPECT_THAT(Total(), IsOkAndHolds(204));
}

// Statements are prepared once per connection; a migration that changes a table's columns
// must not leave every pooled connection failing the statements it prepared before.
TEST_F(RetryTest, StatementPreparedBeforeASchemaChangeIsPreparedAgain) {
  auto columns = [&] {
    return pool_->Read<int>("columns", [](Tx& tx) -> absl::StatusOr<int> {
      return static_cast<int>(tx.Exec("SELECT * FROM accounts WHERE id = $1", 1).columns());
    });
  };
  ASSERT_THAT(columns(), IsOkAndHolds(2));
  ASSERT_OK(pool_->RunInTransaction("migrate", [](Tx& tx) {
    tx.Exec("ALTER TABLE accounts ADD COLUMN note text");
    return absl::OkStatus();
  }));
  EXPECT_THAT(columns(), IsOkAndHolds(3));
}

TEST_F(RetryTest, CallbackErrorsAreNotRetried) {
  int calls = 0;
  EXPECT_THAT(pool_->RunInTransaction("fail",
                                      [&](Tx&) {
                                        ++calls;
                                        return absl::AbortedError("domain conflict");
                                      }),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(calls, 1);
}

TEST_F(RetryTest, ConstraintViolationsAreNotRetried) {
  int calls = 0;
  EXPECT_THAT(pool_->RunInTransaction("dup",
                                      [&](Tx& tx) {
                                        ++calls;
                                        tx.Exec("INSERT INTO accounts VALUES (1, 0)");
                                        return absl::OkStatus();
                                      }),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(calls, 1);
}

// A connection that reached a node before Patroni demoted it fails every write with 25006;
// plain SET makes the pooled connection's session read-only in the same way.
absl::Status MakeSessionReadOnly(Pool& pool) {
  return pool.RunInTransaction("demote", [](Tx& tx) {
    tx.ExecScript("SET default_transaction_read_only = on");
    return absl::OkStatus();
  });
}

absl::Status Deposit(Pool& pool, int& calls, RetryOptions retry = {}) {
  return pool.RunInTransaction(
      "deposit",
      [&](Tx& tx) {
        ++calls;
        tx.Exec("UPDATE accounts SET balance = balance + 1 WHERE id = 1");
        return absl::OkStatus();
      },
      /*serializable=*/false, retry);
}

TEST_F(RetryTest, ConnectionOnAReadOnlyNodeIsReplacedByTheRetry) {
  ASSERT_OK_AND_ASSIGN(auto pool, MakePool(/*size=*/1));
  ASSERT_OK(MakeSessionReadOnly(*pool));
  int calls = 0;
  EXPECT_OK(Deposit(*pool, calls));
  EXPECT_EQ(calls, 2);
  EXPECT_THAT(Total(), IsOkAndHolds(201));
}

TEST_F(RetryTest, ReadOnlyNodeLeftAfterRetriesIsUnavailable) {
  ASSERT_OK_AND_ASSIGN(auto pool, MakePool(/*size=*/1));
  ASSERT_OK(MakeSessionReadOnly(*pool));
  int calls = 0;
  EXPECT_THAT(Deposit(*pool, calls, {.max_attempts = 1}),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("read-only")));
  EXPECT_EQ(calls, 1);
  // The read-only connection was dropped rather than pooled again.
  EXPECT_OK(Deposit(*pool, calls));
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace gpuaas::db
