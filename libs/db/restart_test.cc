// The pool across a PostgreSQL outage, on a private cluster (ScopedPgCluster) so the shared
// fixture server stays up for every other test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "libs/db/db.h"
#include "libs/testing/scoped_pg_cluster.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::db {
namespace {

using ::gpuaas::testing::ScopedPgCluster;
using ::gpuaas::testing::StatusIs;

absl::Status Ping(Pool& pool) {
  return pool.RunInTransaction("ping", [](Tx& tx) {
    tx.Exec("SELECT 1");
    return absl::OkStatus();
  });
}

// Opens `n` connections at once so the pool holds that many idle afterwards.
void WarmUp(Pool& pool, int n) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&] {
      EXPECT_OK(pool.RunInTransaction("warm", [](Tx& tx) {
        tx.Exec("SELECT pg_sleep(0.2)");
        return absl::OkStatus();
      }));
    });
  }
  for (auto& t : threads) t.join();
}

class RestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(cluster_, ScopedPgCluster::Create());
    PoolOptions options;
    options.dsn = cluster_->dsn();
    options.size = 4;
    ASSERT_OK_AND_ASSIGN(pool_, Pool::Create(options));
  }

  std::unique_ptr<ScopedPgCluster> cluster_;
  std::unique_ptr<Pool> pool_;
};

TEST_F(RestartTest, UnavailableWhileDownThenRecoversWithoutRestart) {
  WarmUp(*pool_, 4);
  ASSERT_OK(cluster_->Stop());
  EXPECT_THAT(Ping(*pool_), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(Ping(*pool_), StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_OK(cluster_->Start());
  EXPECT_OK(Ping(*pool_));
}

TEST_F(RestartTest, StaleIdleConnectionsAreReplacedTransparently) {
  WarmUp(*pool_, 4);
  // Every pooled connection dies with the old server; the first transaction afterwards hits
  // one, and the retry must not be spent on its equally dead siblings.
  ASSERT_OK(cluster_->Restart());
  EXPECT_OK(Ping(*pool_));
  WarmUp(*pool_, 4);
}

// A backend that dies under the pool (pg_terminate_backend here; a primary killed by a failover
// drill is the same to the client): the next transaction succeeds, on a fresh connection.
TEST_F(RestartTest, TerminatedBackendsAreReplacedWithoutAnError) {
  WarmUp(*pool_, 4);
  ASSERT_OK(ExecWithoutTransaction(cluster_->dsn(),
                                   "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                   "WHERE backend_type = 'client backend' "
                                   "AND pid <> pg_backend_pid()"));
  EXPECT_OK(Ping(*pool_));
  WarmUp(*pool_, 4);
}

// The failover drill's case: the connection dies in the middle of a transaction (before
// COMMIT, so nothing was written). With no retry left that is UNAVAILABLE, which clients retry,
// never UNKNOWN or INTERNAL (an S3 500); with retries the next attempt succeeds.
TEST_F(RestartTest, ConnectionLostMidTransactionIsUnavailableThenRetried) {
  int attempts = 0;
  auto kill_own_backend = [&](Tx& tx) -> absl::Status {
    ++attempts;
    const auto pid = tx.Exec("SELECT pg_backend_pid()").First()->Get<int64_t>(0);
    if (attempts == 1) {
      EXPECT_OK(ExecWithoutTransaction(cluster_->dsn(),
                                       "SELECT pg_terminate_backend(" + std::to_string(pid) + ")"));
    }
    tx.Exec("SELECT 1");
    return absl::OkStatus();
  };
  EXPECT_THAT(pool_->RunInTransaction("test.lost", kill_own_backend, /*serializable=*/false,
                                      {.max_attempts = 1}),
              StatusIs(absl::StatusCode::kUnavailable));
  attempts = 0;
  EXPECT_OK(pool_->RunInTransaction("test.lost", kill_own_backend));
  EXPECT_EQ(attempts, 2);
}

}  // namespace
}  // namespace gpuaas::db
