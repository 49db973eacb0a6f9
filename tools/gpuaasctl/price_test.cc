#include "tools/gpuaasctl/price.h"

#include <gtest/gtest.h>

#include <limits>

#include "absl/strings/str_cat.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::ctl {
namespace {

using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ParsePriceMicrosTest, DecimalsConvertExactly) {
  EXPECT_THAT(ParsePriceMicros("--price-per-hour", "1.20"), IsOkAndHolds(1'200'000));
  EXPECT_THAT(ParsePriceMicros("--price-per-hour", "0.000001"), IsOkAndHolds(1));
  EXPECT_THAT(ParsePriceMicros("--price-per-hour", "3"), IsOkAndHolds(3'000'000));
  EXPECT_THAT(ParsePriceMicros("--price-per-hour", "0"), IsOkAndHolds(0));
  EXPECT_THAT(ParsePriceMicros("--price-per-hour", "2.5"), IsOkAndHolds(2'500'000));
  // A binary double would make this 0.29999999...: the parse never goes through one.
  EXPECT_THAT(ParsePriceMicros("--price-per-hour", "0.3"), IsOkAndHolds(300'000));
  EXPECT_THAT(ParsePriceMicros("--price-per-hour", "9223372.036854"),
              IsOkAndHolds(9'223'372'036'854));
}

TEST(ParsePriceMicrosTest, BadInputIsRefusedNamingTheFlag) {
  for (const char* bad : {"-1", "abc", "1.2345678", "", ".5", "1.", "1,20", "1.2.3", " 1", "1e3",
                          "+1", "0x10", "1.20USD"}) {
    SCOPED_TRACE(bad);
    auto got = ParsePriceMicros("--price-per-hour", bad);
    EXPECT_THAT(got, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(std::string(got.status().message()), StartsWith("--price-per-hour: "));
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(absl::StrCat("\"", bad, "\"")));
  }
  EXPECT_THAT(std::string(ParsePriceMicros("--price-per-hour", "-1").status().message()),
              HasSubstr("negative"));
  EXPECT_THAT(std::string(ParsePriceMicros("--price-per-hour", "1.2345678").status().message()),
              HasSubstr("6 decimal places"));
}

TEST(ParsePriceMicrosTest, OverflowIsRefused) {
  // int64 holds 9223372036854.775807 units of micros.
  EXPECT_THAT(ParsePriceMicros("--price", "9223372036854.775807"),
              IsOkAndHolds(std::numeric_limits<int64_t>::max()));
  EXPECT_THAT(ParsePriceMicros("--price", "9223372036854.775808"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("too large")));
  EXPECT_THAT(ParsePriceMicros("--price", "99999999999999999999999"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("too large")));
}

TEST(FormatPriceMicrosTest, TwoToSixPlaces) {
  EXPECT_EQ(FormatPriceMicros(1'200'000), "1.20");
  EXPECT_EQ(FormatPriceMicros(1), "0.000001");
  EXPECT_EQ(FormatPriceMicros(1'234'500), "1.2345");
  EXPECT_EQ(FormatPriceMicros(0), "0.00");
  EXPECT_EQ(FormatPriceMicros(42'000'000), "42.00");
  EXPECT_EQ(FormatPriceMicros(-1'500'000), "-1.50");
  EXPECT_EQ(FormatPriceMicros(std::numeric_limits<int64_t>::min()), "-9223372036854.775808");
}

TEST(FormatPriceMicrosTest, RoundTripsWithParse) {
  for (int64_t micros : {0L, 1L, 10L, 1'200'000L, 2'400'001L, 123'456'789L}) {
    EXPECT_THAT(ParsePriceMicros("--p", FormatPriceMicros(micros)), IsOkAndHolds(micros));
  }
}

TEST(FormatMilliTest, Fractions) {
  EXPECT_EQ(FormatMilli(250), "0.25");
  EXPECT_EQ(FormatMilli(5), "0.005");
  EXPECT_EQ(FormatMilli(999), "0.999");
  EXPECT_EQ(FormatMilli(1000), "1");
}

}  // namespace
}  // namespace gpuaas::ctl
