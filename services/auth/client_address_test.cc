#include "services/auth/client_address.h"

#include <gtest/gtest.h>

namespace gpuaas::auth {
namespace {

TEST(ThrottleAddress, NormalizesWhatAGuesserCouldVary) {
  EXPECT_EQ(ThrottleAddress("203.0.113.7"), "203.0.113.7");
  EXPECT_EQ(ThrottleAddress("::ffff:203.0.113.7"), "203.0.113.7");
  // One /64 is one subscriber: its many addresses are one guesser.
  EXPECT_EQ(ThrottleAddress("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  EXPECT_EQ(ThrottleAddress("2001:DB8:1:2:bbbb:cccc:dddd:eeee"), "2001:db8:1:2::/64");
  EXPECT_EQ(ThrottleAddress("not-an-address"), std::nullopt);
  EXPECT_EQ(ThrottleAddress("203.0.113.7:80"), std::nullopt);
  EXPECT_EQ(ThrottleAddress(""), std::nullopt);
}

}  // namespace
}  // namespace gpuaas::auth
