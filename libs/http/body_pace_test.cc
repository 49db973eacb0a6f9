#include "libs/http/body_pace.h"

#include <gtest/gtest.h>

namespace gpuaas::http {
namespace {

TEST(BodyPaceTest, TheGraceIsTheFirstWaitBoundedByTheIdleTimeout) {
  EXPECT_EQ(BodyPace(absl::Seconds(10), 500, absl::Seconds(30)).NextWait(), absl::Seconds(10));
  EXPECT_EQ(BodyPace(absl::Seconds(60), 500, absl::Seconds(30)).NextWait(), absl::Seconds(30));
}

TEST(BodyPaceTest, ATrickleRunsOutOfTime) {
  // One byte every 25 s: each pause is under the idle timeout, the whole is far under 500 B/s.
  BodyPace pace(absl::Seconds(30), 500, absl::Seconds(30));
  int reads = 0;
  while (!pace.TooSlow() && reads < 100) {
    // The byte comes if the read waits long enough for it; else the read times out empty.
    const absl::Duration wait = pace.NextWait();
    if (wait >= absl::Seconds(25)) {
      pace.Record(absl::Seconds(25), 1);
    } else {
      pace.Record(wait, 0);
    }
    ++reads;
  }
  EXPECT_TRUE(pace.TooSlow());
  EXPECT_LE(reads, 2);
  EXPECT_LE(pace.waited(), absl::Seconds(31));
}

TEST(BodyPaceTest, ASlowButSteadyUploadKeepsGoing) {
  // 8 MiB at 600 B/s (a poor link shared by ten connections), 6 KiB every 10 s: hours, never cut.
  BodyPace pace(absl::Seconds(30), 500, absl::Seconds(30));
  while (pace.bytes() < 8 * 1024 * 1024) {
    ASSERT_FALSE(pace.TooSlow()) << pace.bytes() << " bytes in " << pace.waited();
    pace.Record(absl::Seconds(10), 6000);
  }
}

TEST(BodyPaceTest, BytesEarnTimeForALaterStall) {
  BodyPace pace(absl::Seconds(10), 1000, absl::Seconds(30));
  pace.Record(absl::Seconds(1), 20'000);  // 20 s earned, 1 s used
  EXPECT_EQ(pace.NextWait(), absl::Seconds(29));
  pace.Record(absl::Seconds(29), 0);
  EXPECT_TRUE(pace.TooSlow());
}

TEST(BodyPaceTest, NoRateLeavesOnlyTheIdleBound) {
  BodyPace pace(absl::Seconds(1), 0, absl::Seconds(30));
  pace.Record(absl::Hours(5), 1);
  EXPECT_EQ(pace.NextWait(), absl::Seconds(30));
}

}  // namespace
}  // namespace gpuaas::http
