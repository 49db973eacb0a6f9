// Revisions reach watchers in order even when transactions commit out of order: a change drawn
// first but committed last holds back every later one (0003_revision_horizon.sql), so a watch
// that resumes after the last revision it was sent never misses the late one.
#include <gtest/gtest.h>

#include <thread>

#include "absl/synchronization/notification.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/status_matchers.h"
#include "services/instance/migrations.h"
#include "services/instance/repository_instances.h"

namespace gpuaas::instance {
namespace {

class RevisionHorizonTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_OK_AND_ASSIGN(pool_, MakePool(4));
    ASSERT_OK(db::Migrate(*pool_, "instance", Migrations()));
    for (const char* id : {"early", "late"}) {
      ASSERT_OK(pool_->RunInTransaction("test.insert", [&](db::Tx& tx) {
        tx.Exec(
            "INSERT INTO instance.instances (instance_id, tenant_id, spec_name, gpu_num, "
            "template, request_hash, desired_state, state) "
            "VALUES ($1, 'alpha', 's', 1, '', 'h', 1, 1)",
            std::string(id));
        return absl::OkStatus();
      }));
    }
  }
  void TearDown() override {
    pool_.reset();
    PgTest::TearDown();
  }

  int64_t Horizon() {
    absl::StatusOr<int64_t> h = pool_->Read<int64_t>(
        "test.horizon",
        [](db::Tx& tx) -> absl::StatusOr<int64_t> { return repo::RevisionHorizon(tx); });
    EXPECT_TRUE(h.ok()) << h.status();
    return h.value_or(-1);
  }
  std::vector<std::pair<std::string, int64_t>> ChangesAfter(int64_t after) {
    std::vector<std::pair<std::string, int64_t>> out;
    EXPECT_OK(pool_->RunInTransaction("test.changes", [&](db::Tx& tx) {
      out.clear();
      const int64_t horizon = repo::RevisionHorizon(tx);
      for (const InstanceRow& r : repo::Changes(tx, "", after, horizon, 100)) {
        out.emplace_back(r.instance.instance_id(), r.instance.revision());
      }
      return absl::OkStatus();
    }));
    return out;
  }
  void SetMessage(db::Tx& tx, const std::string& id, const std::string& message,
                  int64_t* revision) {
    *revision = tx.Exec(
                      "UPDATE instance.instances SET message = $2 WHERE instance_id = $1 "
                      "RETURNING revision",
                      id, message)
                    .First()
                    ->Get<int64_t>(0);
  }

  std::unique_ptr<db::Pool> pool_;
};

TEST_F(RevisionHorizonTest, AChangeCommittedLateHoldsBackTheLaterOnesUntilItCommits) {
  const int64_t before = Horizon();
  ASSERT_EQ(ChangesAfter(0).size(), 2u);

  // "early" draws its revision first and commits last.
  absl::Notification drawn;
  absl::Notification release;
  int64_t early = 0;
  std::thread slow([&] {
    EXPECT_OK(pool_->RunInTransaction("test.early", [&](db::Tx& tx) {
      SetMessage(tx, "early", "first drawn", &early);
      if (!drawn.HasBeenNotified()) drawn.Notify();
      release.WaitForNotification();
      return absl::OkStatus();
    }));
  });
  drawn.WaitForNotification();
  int64_t late = 0;
  ASSERT_OK(pool_->RunInTransaction("test.late", [&](db::Tx& tx) {
    SetMessage(tx, "late", "drawn second, committed first", &late);
    return absl::OkStatus();
  }));
  ASSERT_LT(early, late);

  // Committed, but not yet to be sent: a watch sent it would skip "early" when it commits.
  EXPECT_LT(Horizon(), early);
  EXPECT_TRUE(ChangesAfter(before).empty());

  release.Notify();
  slow.join();
  EXPECT_GE(Horizon(), late);
  const auto changes = ChangesAfter(before);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0], std::make_pair(std::string("early"), early));
  EXPECT_EQ(changes[1], std::make_pair(std::string("late"), late));
}

TEST_F(RevisionHorizonTest, AnAbortedChangeHoldsNothingBack) {
  const int64_t before = Horizon();
  absl::Status aborted = pool_->RunInTransaction("test.abort", [&](db::Tx& tx) {
    int64_t revision = 0;
    SetMessage(tx, "early", "never committed", &revision);
    return absl::FailedPreconditionError("rolled back");
  });
  EXPECT_FALSE(aborted.ok());
  int64_t late = 0;
  ASSERT_OK(pool_->RunInTransaction("test.late", [&](db::Tx& tx) {
    SetMessage(tx, "late", "after the abort", &late);
    return absl::OkStatus();
  }));
  EXPECT_EQ(Horizon(), late);
  const auto changes = ChangesAfter(before);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].first, "late");
}

}  // namespace
}  // namespace gpuaas::instance
