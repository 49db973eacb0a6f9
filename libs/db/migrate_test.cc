// Migrate with the embedded test set from libs/db/testdata (built by gpuaas_migrations).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "libs/db/db.h"
#include "libs/db/testdata/test_migrations.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::db {
namespace {

using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kSchema = "mig_test";

class MigrateTest : public ::gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK_AND_ASSIGN(pool_, MakePool());
  }

  absl::StatusOr<std::vector<int>> Column(const std::string& sql) {
    return pool_->Read<std::vector<int>>("read", [&](Tx& tx) -> absl::StatusOr<std::vector<int>> {
      std::vector<int> out;
      for (const Row& row : tx.Exec(sql)) out.push_back(row.Get<int>(0));
      return out;
    });
  }

  std::unique_ptr<Pool> pool_;
};

TEST(EmbeddedMigrationsTest, AreOrderedByVersionAndKeepTheTextExactly) {
  std::span<const Migration> m = testdata::TestMigrations();
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].version, 1);
  EXPECT_EQ(m[0].name, "0001_create");
  EXPECT_EQ(m[1].version, 2);
  EXPECT_EQ(m[1].name, "0002_add_owner");
  EXPECT_EQ(m[2].version, 10);
  EXPECT_EQ(m[2].name, "0010_index");
  EXPECT_THAT(std::string(m[0].sql), HasSubstr("raw-string opener R\"( and closer )\" , a "
                                               "backslash \\ , a ; inside"));
  EXPECT_THAT(std::string(m[0].sql), HasSubstr("'semi;colon )\" \\n'"));
  EXPECT_TRUE(m[2].sql.ends_with("INSERT INTO apply_log VALUES (10);\n"));
}

TEST_F(MigrateTest, AppliesInOrderAndRecordsVersions) {
  ASSERT_OK(Migrate(*pool_, kSchema, testdata::TestMigrations()));
  EXPECT_THAT(Column("SELECT version FROM mig_test.schema_migrations ORDER BY version"),
              IsOkAndHolds(ElementsAre(1, 2, 10)));
  EXPECT_THAT(Column("SELECT version FROM mig_test.apply_log"),
              IsOkAndHolds(ElementsAre(1, 2, 10)));
  // Unqualified names in the files land in the schema, not in public.
  EXPECT_THAT(Column("SELECT count(*)::int FROM pg_tables WHERE schemaname = 'public'"),
              IsOkAndHolds(ElementsAre(0)));
}

TEST_F(MigrateTest, RerunIsANoOp) {
  ASSERT_OK(Migrate(*pool_, kSchema, testdata::TestMigrations()));
  ASSERT_OK(Migrate(*pool_, kSchema, testdata::TestMigrations()));
  EXPECT_THAT(Column("SELECT version FROM mig_test.apply_log ORDER BY version"),
              IsOkAndHolds(ElementsAre(1, 2, 10)));
}

TEST_F(MigrateTest, AppliesOnlyNewMigrations) {
  std::span<const Migration> all = testdata::TestMigrations();
  ASSERT_OK(Migrate(*pool_, kSchema, all.first(1)));
  EXPECT_THAT(Column("SELECT version FROM mig_test.schema_migrations"),
              IsOkAndHolds(ElementsAre(1)));
  ASSERT_OK(Migrate(*pool_, kSchema, all));
  EXPECT_THAT(Column("SELECT version FROM mig_test.apply_log ORDER BY version"),
              IsOkAndHolds(ElementsAre(1, 2, 10)));
}

TEST_F(MigrateTest, ConcurrentMigratorsEachApplyEveryMigrationOnce) {
  // Separate pools are separate sessions, as separate processes would be.
  constexpr int kMigrators = 4;
  std::vector<std::unique_ptr<Pool>> pools;
  for (int i = 0; i < kMigrators; ++i) {
    ASSERT_OK_AND_ASSIGN(auto pool, MakePool(1));
    pools.push_back(std::move(pool));
  }
  std::vector<absl::Status> results(kMigrators);
  std::vector<std::thread> threads;
  for (int i = 0; i < kMigrators; ++i) {
    threads.emplace_back(
        [&, i] { results[i] = Migrate(*pools[i], kSchema, testdata::TestMigrations()); });
  }
  for (auto& t : threads) t.join();
  for (const absl::Status& s : results) EXPECT_OK(s);
  EXPECT_THAT(Column("SELECT version FROM mig_test.apply_log ORDER BY version"),
              IsOkAndHolds(ElementsAre(1, 2, 10)));
}

TEST_F(MigrateTest, FailingMigrationIsRolledBackAndNotRecorded) {
  const Migration broken[] = {
      {1, "0001_ok", "CREATE TABLE good (x int)"},
      {2, "0002_bad", "CREATE TABLE half (x int); SELECT * FROM missing_table"},
  };
  EXPECT_THAT(Migrate(*pool_, kSchema, broken),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("0002_bad")));
  EXPECT_THAT(Column("SELECT version FROM mig_test.schema_migrations"),
              IsOkAndHolds(ElementsAre(1)));
  EXPECT_THAT(Column("SELECT count(*)::int FROM pg_tables WHERE tablename = 'half'"),
              IsOkAndHolds(ElementsAre(0)));
}

TEST_F(MigrateTest, RejectsBadInput) {
  const Migration unordered[] = {{2, "0002_b", "SELECT 1"}, {1, "0001_a", "SELECT 1"}};
  EXPECT_THAT(Migrate(*pool_, kSchema, unordered), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Migrate(*pool_, "Bad-Schema; DROP", testdata::TestMigrations()),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace gpuaas::db
