#include "libs/authz/verified_token_cache.h"

#include <gtest/gtest.h>

namespace gpuaas::authz {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);
const absl::Duration kLeeway = absl::Seconds(30);

Principal Alice() {
  Principal p;
  p.user_id = "usr_alice";
  p.tenant_id = "ten_acme";
  p.role = ::gpuaas::common::v1::ROLE_MEMBER;
  p.token_id = "tok_1";
  return p;
}

TEST(VerifiedTokenCache, RemembersAVerifiedToken) {
  VerifiedTokenCache cache(10);
  EXPECT_FALSE(cache.Find("t1", 1, kNow, kLeeway).has_value());
  cache.Insert("t1", 1, Alice(), kNow, kNow + absl::Minutes(15), kNow);
  std::optional<Principal> hit = cache.Find("t1", 1, kNow + absl::Minutes(1), kLeeway);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->user_id, "usr_alice");
  EXPECT_EQ(hit->tenant_id, "ten_acme");
  EXPECT_EQ(hit->token_id, "tok_1");
  EXPECT_FALSE(cache.Find("t2", 1, kNow, kLeeway).has_value());
}

TEST(VerifiedTokenCache, ExpiryFollowsTheVerifierRule) {
  VerifiedTokenCache cache(10);
  const absl::Time exp = kNow + absl::Minutes(15);
  cache.Insert("t1", 1, Alice(), kNow, exp, kNow);
  EXPECT_TRUE(cache.Find("t1", 1, exp + kLeeway - absl::Seconds(1), kLeeway).has_value());
  EXPECT_FALSE(cache.Find("t1", 1, exp + kLeeway, kLeeway).has_value());
  // A clock that went back before the token's iat (beyond the leeway) does not trust it either.
  EXPECT_FALSE(cache.Find("t1", 1, kNow - kLeeway - absl::Seconds(1), kLeeway).has_value());
}

TEST(VerifiedTokenCache, ANewKeySetForgetsEverything) {
  VerifiedTokenCache cache(10);
  cache.Insert("t1", 1, Alice(), kNow, kNow + absl::Minutes(15), kNow);
  EXPECT_FALSE(cache.Find("t1", 2, kNow, kLeeway).has_value());
  cache.Insert("t2", 2, Alice(), kNow, kNow + absl::Minutes(15), kNow);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_FALSE(cache.Find("t1", 1, kNow, kLeeway).has_value());
  // A verification that raced with the refetch and used the old keys is not recorded.
  cache.Insert("t3", 1, Alice(), kNow, kNow + absl::Minutes(15), kNow);
  EXPECT_FALSE(cache.Find("t3", 1, kNow, kLeeway).has_value());
  EXPECT_FALSE(cache.Find("t3", 2, kNow, kLeeway).has_value());
}

TEST(VerifiedTokenCache, StaysWithinCapacity) {
  VerifiedTokenCache cache(3);
  cache.Insert("old", 1, Alice(), kNow, kNow + absl::Minutes(1), kNow);
  cache.Insert("a", 1, Alice(), kNow, kNow + absl::Minutes(15), kNow);
  cache.Insert("b", 1, Alice(), kNow, kNow + absl::Minutes(15), kNow);
  // Full: the expired entry makes room and the live ones stay.
  const absl::Time later = kNow + absl::Minutes(2);
  cache.Insert("c", 1, Alice(), later, later + absl::Minutes(15), later);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_TRUE(cache.Find("a", 1, later, kLeeway).has_value());
  EXPECT_TRUE(cache.Find("c", 1, later, kLeeway).has_value());
  // Full of live entries: start over rather than grow.
  cache.Insert("d", 1, Alice(), later, later + absl::Minutes(15), later);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(cache.Find("d", 1, later, kLeeway).has_value());
}

}  // namespace
}  // namespace gpuaas::authz
