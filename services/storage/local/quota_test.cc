// Byte and file limits: the write that would pass one is refused before its first byte and
// nothing stored changes; concurrent writers never pass a limit together.
#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "services/storage/local/local_test_util.h"
#include "services/storage/local/quota_ledger.h"

namespace gpuaas::storage::local {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

VolumeUsage OnDisk(const std::filesystem::path& dir) {
  VolumeUsage usage;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) {
      usage.files += 1;
      usage.bytes += static_cast<int64_t>(e.file_size());
    }
  }
  return usage;
}

class QuotaTest : public LocalBackendTest {
 protected:
  void Limit(int64_t bytes, int64_t files) {
    ASSERT_OK_AND_ASSIGN(volume_, backend_->OpenVolume("vol", VolumeLimits{bytes, files}));
  }
};

TEST(QuotaLedgerTest, ReservationsAndSettlement) {
  QuotaLedger ledger;
  ledger.SetLimits(VolumeLimits{100, 2});
  ASSERT_OK_AND_ASSIGN(Reservation a, ledger.Reserve(Charge{60, 1}));
  EXPECT_THAT(ledger.Reserve(Charge{41, 0}),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("byte limit")));
  ASSERT_OK_AND_ASSIGN(Reservation b, ledger.Reserve(Charge{40, 1}));
  EXPECT_THAT(ledger.Reserve(Charge{0, 1}),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("file limit")));
  EXPECT_OK(ledger.Reserve(Charge{0, 0}));  // nothing to add always fits
  ASSERT_OK(ledger.Settle(a, Charge{60, 1}));
  EXPECT_EQ(ledger.used().bytes, 60);
  { Reservation dropped = std::move(b); }
  EXPECT_EQ(ledger.reserved().bytes, 0);
  // A commit that turns out bigger than reserved (the replaced object shrank meanwhile) must
  // fit on its own.
  ASSERT_OK_AND_ASSIGN(Reservation c, ledger.Reserve(Charge{30, 0}));
  EXPECT_THAT(ledger.Settle(c, Charge{50, 0}), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(ledger.reserved().bytes, 30);  // kept for the caller to drop
  ASSERT_OK(ledger.Settle(c, Charge{40, 0}));
  EXPECT_EQ(ledger.used().bytes, 100);
  // Sizes near the int64 range cannot overflow the check.
  EXPECT_THAT(ledger.Reserve(Charge{INT64_MAX, 0}), StatusIs(absl::StatusCode::kResourceExhausted));
}

// A count that trails the writes (CephFS's rstats) may lack this ledger's recent commits: within
// the lag it only raises the counters; after it, it replaces them (deletes elsewhere show).
TEST(QuotaLedgerTest, ALaggingCountOnlyRaisesTheCountersRightAfterACommit) {
  QuotaLedger ledger;
  ledger.SetLimits({.max_bytes = 100, .max_files = 10});
  ledger.SetUsedLagging({.bytes = 30, .files = 3}, absl::Seconds(10), absl::Now());
  EXPECT_EQ(ledger.used().bytes, 30);  // nothing committed here: the count is the truth
  ASSERT_OK_AND_ASSIGN(Reservation r, ledger.Reserve({.bytes = 50, .files = 1}));
  ASSERT_OK(ledger.Settle(r, {.bytes = 50, .files = 1}));
  ledger.SetUsedLagging({.bytes = 40, .files = 3}, absl::Seconds(10), absl::Now());
  EXPECT_EQ(ledger.used().bytes, 80);  // the count has not seen the 50 yet
  EXPECT_EQ(ledger.used().files, 4);
  ledger.SetUsedLagging({.bytes = 90, .files = 5}, absl::Seconds(10), absl::Now());
  EXPECT_EQ(ledger.used().bytes, 90);  // more than this ledger knows: someone else wrote
  ledger.SetUsedLagging({.bytes = 20, .files = 1}, absl::Seconds(10),
                        absl::Now() + absl::Seconds(11));
  EXPECT_EQ(ledger.used().bytes, 20);  // long after: deleted elsewhere
  EXPECT_EQ(ledger.used().files, 1);
}

TEST_F(QuotaTest, TheWriteThatWouldPassTheByteLimitIsRefusedAndNothingChanges) {
  Limit(100, 1000);
  ASSERT_OK(Put(*volume_, "a", std::string(60, 'a')));
  EXPECT_THAT(volume_->Create("b", 41, ""),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("byte limit")));
  ASSERT_OK(Put(*volume_, "b", std::string(40, 'b')));  // exactly full
  // Replacing "a" with something no larger fits even in a full volume; larger does not.
  ASSERT_OK(Put(*volume_, "a", std::string(50, 'A')));
  EXPECT_THAT(Put(*volume_, "a", std::string(61, 'A')),
              StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(Get(*volume_, "a"), gpuaas::testing::IsOkAndHolds(std::string(50, 'A')));
  EXPECT_EQ(volume_->Usage().bytes, 90);
  EXPECT_EQ(OnDisk(VolumeDir()).bytes, 90);
  EXPECT_TRUE(std::filesystem::is_empty(DataRoot() / "staging"));
  // Copies count too.
  EXPECT_THAT(volume_->Copy("a", "c"), StatusIs(absl::StatusCode::kResourceExhausted));
  // Deleting frees room.
  ASSERT_OK(volume_->Delete("b"));
  ASSERT_OK(volume_->Copy("a", "c"));
}

TEST_F(QuotaTest, TheFileLimit) {
  Limit(1000, 3);
  ASSERT_OK(Put(*volume_, "1", "x"));
  ASSERT_OK(Put(*volume_, "2", "x"));
  ASSERT_OK(Put(*volume_, "3", "x"));
  EXPECT_THAT(volume_->Create("4", 1, ""),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("file limit")));
  ASSERT_OK(Put(*volume_, "3", "overwrite"));  // not a new file
  EXPECT_EQ(volume_->Usage().files, 3);
  EXPECT_EQ(OnDisk(VolumeDir()).files, 3);
}

TEST_F(QuotaTest, ShrunkenLimitsRefuseGrowthButAllowDeletes) {
  ASSERT_OK(Put(*volume_, "a", std::string(100, 'a')));
  Limit(50, 10);
  EXPECT_THAT(volume_->Create("b", 1, ""), StatusIs(absl::StatusCode::kResourceExhausted));
  ASSERT_OK(volume_->Delete("a"));
  ASSERT_OK(Put(*volume_, "b", "1"));
}

TEST_F(QuotaTest, EightConcurrentWritersNeverPassTheLimit) {
  constexpr int64_t kLimit = 1 << 20;
  constexpr int kObject = 40'000;
  Limit(kLimit, 1000);
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::string chunk(kObject / 4, static_cast<char>('a' + t));
      for (int i = 0; i < 10; ++i) {
        absl::StatusOr<std::unique_ptr<ObjectWriter>> writer =
            volume_->Create(absl::StrCat("t", t, "/", i), kObject, "");
        if (!writer.ok()) {
          EXPECT_THAT(writer.status(), StatusIs(absl::StatusCode::kResourceExhausted));
          refused.fetch_add(1);
          continue;
        }
        for (int c = 0; c < 4; ++c) {
          ASSERT_OK((*writer)->Write(chunk));
        }
        ASSERT_OK((*writer)->Commit());
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  const VolumeUsage disk = OnDisk(VolumeDir());
  EXPECT_LE(disk.bytes, kLimit);
  EXPECT_EQ(disk.bytes, volume_->Usage().bytes);
  EXPECT_EQ(disk.files, volume_->Usage().files);
  EXPECT_EQ(disk.files, kLimit / kObject);  // every write that could fit did
  EXPECT_EQ(refused.load(), 80 - kLimit / kObject);
}

TEST_F(QuotaTest, ConcurrentOverwritersOfOneKeyStayExact) {
  Limit(10'000, 10);
  ASSERT_OK(Put(*volume_, "k", std::string(5'000, 'x')));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const int size = 1'000 + ((t * 31 + i * 17) % 9) * 1'000;
        absl::StatusOr<ObjectInfo> put = Put(*volume_, "k", std::string(size, 'y'));
        if (!put.ok()) {
          EXPECT_THAT(put.status(), StatusIs(absl::StatusCode::kResourceExhausted));
        }
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  const VolumeUsage disk = OnDisk(VolumeDir());
  EXPECT_LE(disk.bytes, 10'000);
  EXPECT_EQ(disk.bytes, volume_->Usage().bytes);
  EXPECT_EQ(volume_->Usage().files, 1);
}

}  // namespace
}  // namespace gpuaas::storage::local
