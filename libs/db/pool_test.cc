// Pool and RunInTransaction against a real PostgreSQL (fixture `postgres`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>

#include "absl/synchronization/notification.h"
#include "libs/db/db.h"
#include "libs/db/dsn.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::db {
namespace {

using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

class PoolTest : public ::gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK_AND_ASSIGN(pool_, MakePool());
    ASSERT_OK(pool_->RunInTransaction("create", [](Tx& tx) {
      tx.Exec("CREATE TABLE kv (k text PRIMARY KEY, v bigint)");
      return absl::OkStatus();
    }));
  }

  absl::StatusOr<int64_t> Count() {
    return pool_->Read<int64_t>("count", [](Tx& tx) -> absl::StatusOr<int64_t> {
      return tx.Exec("SELECT count(*) FROM kv")[0].Get<int64_t>(0);
    });
  }

  std::unique_ptr<Pool> pool_;
};

TEST_F(PoolTest, CommitsWhenCallbackReturnsOk) {
  ASSERT_OK(pool_->RunInTransaction("insert", [](Tx& tx) {
    tx.Exec("INSERT INTO kv VALUES ($1, $2)", "a", 1);
    tx.Exec("INSERT INTO kv VALUES ($1, $2)", "b", std::optional<int64_t>());
    return absl::OkStatus();
  }));
  EXPECT_THAT(Count(), IsOkAndHolds(2));
}

TEST_F(PoolTest, RollsBackAndReturnsCallbackStatus) {
  absl::Status s = pool_->RunInTransaction("insert", [](Tx& tx) {
    tx.Exec("INSERT INTO kv VALUES ($1, $2)", "a", 1);
    return absl::FailedPreconditionError("changed my mind");
  });
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("changed my mind")));
  EXPECT_THAT(Count(), IsOkAndHolds(0));
}

TEST_F(PoolTest, RollsBackWhenCallbackThrows) {
  absl::Status s = pool_->RunInTransaction("insert", [](Tx& tx) -> absl::Status {
    tx.Exec("INSERT INTO kv VALUES ($1, $2)", "a", 1);
    tx.Exec("SELECT no_such_column FROM kv");
    return absl::OkStatus();
  });
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal, HasSubstr("42703")));
  EXPECT_THAT(Count(), IsOkAndHolds(0));
}

TEST_F(PoolTest, AppliesTheStatementTimeout) {
  auto timeout = pool_->Read<std::string>("show", [](Tx& tx) -> absl::StatusOr<std::string> {
    return tx.Exec("SHOW statement_timeout")[0].Get<std::string>(0);
  });
  EXPECT_THAT(timeout, IsOkAndHolds("30s"));  // MakePool's setting
}

TEST_F(PoolTest, SerializableIsolationWhenAsked) {
  std::string level;
  ASSERT_OK(pool_->RunInTransaction(
      "show",
      [&](Tx& tx) {
        level = tx.Exec("SHOW transaction_isolation")[0].Get<std::string>(0);
        return absl::OkStatus();
      },
      /*serializable=*/true));
  EXPECT_EQ(level, "serializable");
  ASSERT_OK(pool_->RunInTransaction("show", [&](Tx& tx) {
    level = tx.Exec("SHOW transaction_isolation")[0].Get<std::string>(0);
    return absl::OkStatus();
  }));
  EXPECT_EQ(level, "read committed");
}

TEST_F(PoolTest, ReusesConnectionsUpToSize) {
  std::set<int> backends;
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(pool_->RunInTransaction("pid", [&](Tx& tx) {
      backends.insert(tx.Exec("SELECT pg_backend_pid()")[0].Get<int>(0));
      return absl::OkStatus();
    }));
  }
  EXPECT_EQ(backends.size(), 1u);  // sequential use never needs a second connection
}

TEST_F(PoolTest, ExhaustedPoolReturnsUnavailableAfterAcquireTimeout) {
  PoolOptions options;
  options.dsn = dsn();
  options.size = 1;
  options.acquire_timeout = absl::Milliseconds(50);
  ASSERT_OK_AND_ASSIGN(auto small, Pool::Create(options));

  absl::Notification holding, release;
  std::thread holder([&] {
    EXPECT_OK(small->RunInTransaction("hold", [&](Tx&) {
      holding.Notify();
      release.WaitForNotification();
      return absl::OkStatus();
    }));
  });
  holding.WaitForNotification();
  EXPECT_THAT(small->RunInTransaction("starved", [](Tx&) { return absl::OkStatus(); }),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("exhausted")));
  release.Notify();
  holder.join();
  EXPECT_OK(small->RunInTransaction("after", [](Tx&) { return absl::OkStatus(); }));
}

TEST_F(PoolTest, ConcurrentTransactionsShareThePool) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        EXPECT_OK(pool_->RunInTransaction("insert", [&](Tx& tx) {
          tx.Exec("INSERT INTO kv VALUES ($1, $2)", std::to_string(t * 100 + i), i);
          return absl::OkStatus();
        }));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_THAT(Count(), IsOkAndHolds(160));
}

TEST(PoolCreateTest, RejectsBadOptions) {
  PoolOptions options;
  EXPECT_THAT(Pool::Create(options), StatusIs(absl::StatusCode::kInvalidArgument));
  options.dsn = "host=127.0.0.1";
  options.size = 0;
  EXPECT_THAT(Pool::Create(options), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(DsnTest, AppendsParamsInEitherForm) {
  EXPECT_EQ(WithDsnParam("postgresql://u@h:1/db", "dbname", "x y"),
            "postgresql://u@h:1/db?dbname=x%20y");
  EXPECT_EQ(WithDsnParam("postgresql://u@h:1/db?sslmode=disable", "connect_timeout", "3"),
            "postgresql://u@h:1/db?sslmode=disable&connect_timeout=3");
  EXPECT_EQ(WithDsnParam("host=h", "dbname", "it's"), "host=h dbname='it\\'s'");
  EXPECT_TRUE(DsnHasParam("postgresql://u@h:1/db?connect_timeout=9", "connect_timeout"));
  EXPECT_TRUE(DsnHasParam("host=h connect_timeout=9", "connect_timeout"));
  EXPECT_FALSE(DsnHasParam("host=h", "connect_timeout"));
}

}  // namespace
}  // namespace gpuaas::db
