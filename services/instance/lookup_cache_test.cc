// LookupCache on a fake clock: a value serves for its ttl and not a moment longer, a zero ttl
// keeps nothing, and a full cache never grows past its capacity.
#include "services/instance/lookup_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuaas::instance {
namespace {

TEST(LookupCacheTest, AValueServesForItsTtlOnly) {
  FakeClock clock;
  LookupCache<int> cache(clock, absl::Seconds(2), 10);
  EXPECT_EQ(cache.Find("alpha"), std::nullopt);
  cache.Insert("alpha", 7);
  EXPECT_EQ(cache.Find("alpha"), 7);
  EXPECT_EQ(cache.Find("beta"), std::nullopt);
  clock.Advance(absl::Seconds(2) - absl::Milliseconds(1));
  EXPECT_EQ(cache.Find("alpha"), 7);
  clock.Advance(absl::Milliseconds(1));
  EXPECT_EQ(cache.Find("alpha"), std::nullopt) << "expired at exactly its ttl";
}

TEST(LookupCacheTest, InsertingAgainReplacesTheValueAndRestartsItsTtl) {
  FakeClock clock;
  LookupCache<int> cache(clock, absl::Seconds(2), 10);
  cache.Insert("alpha", 7);
  clock.Advance(absl::Seconds(1));
  cache.Insert("alpha", 8);
  clock.Advance(absl::Seconds(1) + absl::Milliseconds(500));
  EXPECT_EQ(cache.Find("alpha"), 8);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(LookupCacheTest, AZeroTtlOrCapacityKeepsNothing) {
  FakeClock clock;
  LookupCache<int> no_ttl(clock, absl::ZeroDuration(), 10);
  no_ttl.Insert("alpha", 7);
  EXPECT_EQ(no_ttl.Find("alpha"), std::nullopt);
  EXPECT_EQ(no_ttl.size(), 0u);
  LookupCache<int> no_room(clock, absl::Seconds(2), 0);
  no_room.Insert("alpha", 7);
  EXPECT_EQ(no_room.Find("alpha"), std::nullopt);
}

TEST(LookupCacheTest, WhenFullExpiredEntriesGoFirstThenEverything) {
  FakeClock clock;
  LookupCache<int> cache(clock, absl::Seconds(2), 3);
  cache.Insert("old", 1);
  clock.Advance(absl::Seconds(1));
  cache.Insert("a", 2);
  cache.Insert("b", 3);
  clock.Advance(absl::Seconds(1));  // "old" expires
  cache.Insert("c", 4);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.Find("a"), 2) << "only the expired entry made room";
  EXPECT_EQ(cache.Find("c"), 4);
  cache.Insert("d", 5);  // full of live entries: they all go
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Find("d"), 5);
  EXPECT_EQ(cache.Find("a"), std::nullopt);
  cache.Insert("d", 6);  // a key already held needs no room
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace gpuaas::instance
