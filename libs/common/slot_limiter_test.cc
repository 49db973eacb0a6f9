#include "libs/common/slot_limiter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace gpuaas {
namespace {

using ::testing::HasSubstr;

TEST(SlotLimiterTest, OneKeyCannotTakeMoreThanItsShare) {
  SlotLimiter limiter(/*total=*/4, /*per_key=*/2, "log streams", "tenant");
  absl::StatusOr<SlotLimiter::Slot> a1 = limiter.Acquire("a");
  absl::StatusOr<SlotLimiter::Slot> a2 = limiter.Acquire("a");
  ASSERT_TRUE(a1.ok() && a2.ok());
  absl::StatusOr<SlotLimiter::Slot> a3 = limiter.Acquire("a");
  EXPECT_EQ(a3.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(a3.status().message(), HasSubstr("at most 2 log streams at once per tenant"));
  EXPECT_TRUE(limiter.Acquire("b").ok());  // the others still get theirs
  EXPECT_EQ(limiter.taken("a"), 2);
}

TEST(SlotLimiterTest, TheTotalCapHoldsAcrossKeys) {
  SlotLimiter limiter(/*total=*/2, /*per_key=*/2, "log streams", "tenant");
  std::vector<SlotLimiter::Slot> held;
  held.push_back(*limiter.Acquire("a"));
  held.push_back(*limiter.Acquire("b"));
  absl::StatusOr<SlotLimiter::Slot> c = limiter.Acquire("c");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(c.status().message(), HasSubstr("at most 2 log streams at once;"));
  EXPECT_EQ(limiter.taken("c"), 0);
}

TEST(SlotLimiterTest, ASlotIsReleasedOnceWhenItsLastHolderGoes) {
  SlotLimiter limiter(/*total=*/1, /*per_key=*/1, "log streams", "tenant");
  std::optional<SlotLimiter::Slot> moved;
  {
    SlotLimiter::Slot slot = *limiter.Acquire("a");
    moved.emplace(std::move(slot));
  }
  EXPECT_EQ(limiter.taken(), 1);  // the moved-from handle released nothing
  EXPECT_FALSE(limiter.Acquire("b").ok());
  moved.reset();
  EXPECT_EQ(limiter.taken(), 0);
  EXPECT_TRUE(limiter.Acquire("a").ok());
}

TEST(SlotLimiterTest, ASlotMayOutliveItsLimiter) {
  std::optional<SlotLimiter::Slot> slot;
  {
    SlotLimiter limiter(1, 1, "log streams", "tenant");
    absl::StatusOr<SlotLimiter::Slot> taken = limiter.Acquire("a");
    ASSERT_TRUE(taken.ok()) << taken.status();
    slot.emplace(*std::move(taken));
    EXPECT_EQ(limiter.taken("a"), 1);
  }
  // The slot keeps its limiter's counts alive, and only those: a new limiter is not full.
  SlotLimiter next(1, 1, "log streams", "tenant");
  absl::StatusOr<SlotLimiter::Slot> again = next.Acquire("a");
  EXPECT_TRUE(again.ok()) << again.status();
  slot.reset();  // releases into the dead limiter's state: no use after free (ASan)
  EXPECT_EQ(next.taken("a"), 1);
  EXPECT_EQ(next.taken(), 1);
}

}  // namespace
}  // namespace gpuaas
