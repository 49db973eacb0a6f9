#include "libs/common/quantity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "libs/testing/status_matchers.h"

namespace gpuaas {
namespace {

using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kKi = int64_t{1} << 10;
constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kTi = int64_t{1} << 40;
constexpr int64_t kPi = int64_t{1} << 50;
constexpr int64_t kEi = int64_t{1} << 60;

struct Good {
  const char* text;
  int64_t want;
};

TEST(ParseCpuMillis, AcceptsKubernetesQuantities) {
  const Good cases[] = {
      {"8", 8000},
      {"500m", 500},
      {"0.5", 500},
      {"1", 1000},
      {"+2", 2000},
      {"1.", 1000},
      {".5", 500},
      {"1.5", 1500},
      {"0.001", 1},
      {"007", 7000},
      {"1e3", 1'000'000},
      {"1E3", 1'000'000},
      {"1e+3", 1'000'000},
      {"1e-3", 1},
      {"1.e3", 1'000'000},
      {"0.1e1", 1000},
      {"1k", 1'000'000},
      {"1000000n", 1},
      {"1000u", 1},
      {"1.50000000000000000000000000000000000000000000", 1500},
      {"0.000000000000000000000000000000000000000000001e45", 1000},
      {"1000000", kMaxCpuCores * 1000},
      {"1M", kMaxCpuCores * 1000},
  };
  for (const Good& c : cases) {
    EXPECT_THAT(ParseCpuMillis("spec.cpu", c.text), IsOkAndHolds(c.want)) << c.text;
  }
}

TEST(ParseBytes, AcceptsKubernetesQuantities) {
  const Good cases[] = {
      {"1", 1},
      {"32Gi", 32 * kGi},
      {"1.5Gi", 1536 * (kGi / kKi)},
      {"1.5Ti", kTi + kTi / 2},
      {"0.5Ki", 512},
      {".25Ki", 256},
      {"1e3", 1000},
      {"1k", 1000},
      {"100M", 100'000'000},
      {"2E", 2'000'000'000'000'000'000},
      {"1000m", 1},  // exact, so allowed: one byte in milli-units
      {"1000000000n", 1},
      {"7Ei", 7 * kEi},  // 7 * 2^60 < 2^63
      {"7.5Ei", 15 * (kEi / 2)},
      {"8191Pi", 8191 * kPi},  // 2^63 - 2^50
      {"9223372036854775807", kMax},
      {"9.223372036854775807E", kMax},
      {"9223372036854775807000m", kMax},
      {"9223372036854775807e0", kMax},
      {"00000000000000000000000000000000000000000009223372036854775807", kMax},
  };
  for (const Good& c : cases) {
    EXPECT_THAT(ParseBytes("spec.memory", c.text), IsOkAndHolds(c.want)) << c.text;
  }
}

struct Bad {
  const char* text;
  const char* why;
};

// Inputs refused by both parsers, with the reason each error gives.
constexpr Bad kBadForBoth[] = {
    {"", "required"},
    {"-1", "must be positive"},
    {"-0", "must be positive"},
    {"-1e400", "must be positive"},
    {"0", "must be positive"},
    {"0m", "must be positive"},
    {"0.000", "must be positive"},
    {"0e400", "must be positive"},
    {"abc", "not a Kubernetes quantity: \"abc\""},
    {" 1", "not a Kubernetes quantity"},
    {"1 ", "not a Kubernetes quantity"},
    {"1.2.3", "not a Kubernetes quantity"},
    {"Gi", "not a Kubernetes quantity"},
    {"1gi", "not a Kubernetes quantity"},
    {"1K", "not a Kubernetes quantity"},
    {"1KB", "not a Kubernetes quantity"},
    {"+", "not a Kubernetes quantity"},
    {"-", "not a Kubernetes quantity"},
    {".", "not a Kubernetes quantity"},
    {"+.", "not a Kubernetes quantity"},
    {"--1", "not a Kubernetes quantity"},
    {"+-1", "not a Kubernetes quantity"},
    {"1e", "not a Kubernetes quantity"},
    {"1e+", "not a Kubernetes quantity"},
    {"1e1.5", "not a Kubernetes quantity"},
    {"1ee3", "not a Kubernetes quantity"},
    {"1e3k", "not a Kubernetes quantity"},
    {"1ke3", "not a Kubernetes quantity"},
    {"e3", "not a Kubernetes quantity"},
    {"0x10", "not a Kubernetes quantity"},
    {"1_000", "not a Kubernetes quantity"},
    {"1,5", "not a Kubernetes quantity"},
    {"\xd9\xa1", "not a Kubernetes quantity: \"\\xd9\\xa1\""},  // ARABIC-INDIC DIGIT ONE
    {"1e400", "must be at most"},
    {"1e999999999999999999999999", "must be at most"},
    {"1e-400", "must be a whole number"},
    {"1e-999999999999999999999999", "must be a whole number"},
    {"1n", "must be a whole number"},
    {"1.00000000000000000000000000000000000001", "more than 38 significant digits"},
};

TEST(ParseCpuMillis, RefusesBadInputNamingTheField) {
  for (const Bad& c : kBadForBoth) {
    EXPECT_THAT(ParseCpuMillis("spec.cpu", c.text),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(StartsWith("spec.cpu: "), HasSubstr(c.why))))
        << c.text;
  }
  const Bad cpu_only[] = {
      {"1.5Ki", "binary suffixes"},
      {"1Ki", "binary suffixes"},
      {"0.5Ki", "binary suffixes"},
      {"0.0001", "whole number of millicores"},
      {"1.0005", "whole number of millicores"},
      {"1u", "whole number of millicores"},
      {"1000001", "must be at most 1000000 cores"},
      {"1000000.001", "must be at most 1000000 cores"},
      {"9223372036854775808", "must be at most"},
  };
  for (const Bad& c : cpu_only) {
    EXPECT_THAT(ParseCpuMillis("spec.cpu", c.text),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(StartsWith("spec.cpu: "), HasSubstr(c.why))))
        << c.text;
  }
}

TEST(ParseBytes, RefusesBadInputNamingTheField) {
  for (const Bad& c : kBadForBoth) {
    EXPECT_THAT(ParseBytes("spec.disk", c.text),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(StartsWith("spec.disk: "), HasSubstr(c.why))))
        << c.text;
  }
  const Bad bytes_only[] = {
      {"1.5", "whole number of bytes"},
      {"500m", "whole number of bytes"},
      {"0.1Ki", "whole number of bytes"},
      {"9223372036854775808", "must be at most 9223372036854775807 bytes"},
      {"9223372036854775808000m", "must be at most"},
      {"99999999999Ei", "must be at most"},
      {"8Ei", "must be at most"},  // 2^63; Kubernetes would silently cap it at 2^63-1
      {"9.3E", "must be at most"},
      {"8192Pi", "must be at most"},
      {"99999999999999999999999999999999999999", "must be at most"},
  };
  for (const Bad& c : bytes_only) {
    EXPECT_THAT(ParseBytes("spec.disk", c.text),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(StartsWith("spec.disk: "), HasSubstr(c.why))))
        << c.text;
  }
}

TEST(ParseBytes, ExactMessages) {
  EXPECT_THAT(ParseBytes("spec.memory", ""),
              StatusIs(absl::StatusCode::kInvalidArgument, "spec.memory: required"));
  EXPECT_THAT(ParseBytes("spec.memory", "abc"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "spec.memory: not a Kubernetes quantity: \"abc\""));
  EXPECT_THAT(
      ParseBytes("spec.memory", "1.5"),
      StatusIs(absl::StatusCode::kInvalidArgument, "spec.memory: must be a whole number of bytes"));
  EXPECT_THAT(ParseBytes("spec.memory", "-1Gi"),
              StatusIs(absl::StatusCode::kInvalidArgument, "spec.memory: must be positive"));
}

TEST(ParseBytes, QuotesHostileInputEscapedAndShort) {
  const std::string long_junk(10'000, 'x');
  absl::StatusOr<int64_t> r = ParseBytes("spec.disk", long_junk);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.status().message().size(), 120u);
  EXPECT_THAT(ParseBytes("spec.disk", std::string("1\0", 2)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"1\\x00\"")));
  EXPECT_THAT(ParseBytes("spec.disk", "1\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"1\\n\"")));
}

TEST(FormatCpuMillis, PrefersWholeCores) {
  EXPECT_EQ(FormatCpuMillis(500), "500m");
  EXPECT_EQ(FormatCpuMillis(1), "1m");
  EXPECT_EQ(FormatCpuMillis(8000), "8");
  EXPECT_EQ(FormatCpuMillis(1500), "1500m");
  EXPECT_EQ(FormatCpuMillis(kMaxCpuCores * 1000), "1000000");
  EXPECT_EQ(FormatCpuMillis(0), "0");
  EXPECT_EQ(FormatCpuMillis(-500), "-500m");
  EXPECT_EQ(FormatCpuMillis(std::numeric_limits<int64_t>::min()), "-9223372036854775808m");
}

TEST(FormatBytes, PicksTheExactUnitWithFewestDigits) {
  EXPECT_EQ(FormatBytes(1), "1");
  EXPECT_EQ(FormatBytes(1023), "1023");
  EXPECT_EQ(FormatBytes(1024), "1Ki");
  EXPECT_EQ(FormatBytes(1000), "1k");
  EXPECT_EQ(FormatBytes(32 * kGi), "32Gi");
  EXPECT_EQ(FormatBytes(kGi + kGi / 2), "1536Mi");
  EXPECT_EQ(FormatBytes(kTi + kTi / 2), "1536Gi");
  EXPECT_EQ(FormatBytes(1000 * kKi), "1000Ki");  // a tie with "1024k": binary wins
  EXPECT_EQ(FormatBytes(1'000'000), "1M");
  EXPECT_EQ(FormatBytes(64'000), "64k");  // 2^9 * 125, not a whole Ki
  EXPECT_EQ(FormatBytes(100'000'000), "100M");
  EXPECT_EQ(FormatBytes(500'000'000'000), "500G");  // also 488281250Ki
  EXPECT_EQ(FormatBytes(2'000'000'000'000'000'000), "2E");
  EXPECT_EQ(FormatBytes(7 * kEi), "7Ei");
  EXPECT_EQ(FormatBytes(1'000'001), "1000001");
  EXPECT_EQ(FormatBytes(kMax), "9223372036854775807");
  EXPECT_EQ(FormatBytes(0), "0");
  EXPECT_EQ(FormatBytes(-kKi), "-1Ki");
  EXPECT_EQ(FormatBytes(std::numeric_limits<int64_t>::min()), "-8Ei");
}

TEST(Quantity, ChosenValuesRoundTrip) {
  const int64_t bytes[] = {1,       2,           999,  1000,       1023,
                           1024,    1025,        4096, 1000 * kKi, 1536 * kKi,
                           kGi - 1, 32 * kGi,    kTi,  kPi,        7 * kEi,
                           kEi + 1, kMax - 1024, kMax, kMax - kPi, 1'000'000'000'000'000'000};
  for (int64_t b : bytes) {
    EXPECT_THAT(ParseBytes("f", FormatBytes(b)), IsOkAndHolds(b)) << b;
  }
  const int64_t millis[] = {
      1, 10, 100, 500, 999, 1000, 1001, 1500, 8000, 64'000, kMaxCpuCores * 1000};
  for (int64_t m : millis) {
    EXPECT_THAT(ParseCpuMillis("f", FormatCpuMillis(m)), IsOkAndHolds(m)) << m;
  }
}

// Values drawn to hit every suffix: a random mantissa times a random power of 2 or 10, plus
// uniformly random values, which are mostly odd and so format as plain integers.
TEST(Quantity, RandomValuesRoundTrip) {
  std::mt19937_64 rng(20240611);
  auto draw = [&rng](int64_t max) {
    int64_t v = 0;
    switch (rng() % 3) {
      case 0:
        v = static_cast<int64_t>(rng() % static_cast<uint64_t>(max)) + 1;
        break;
      case 1:
        v = static_cast<int64_t>(rng() % 100'000 + 1) << (rng() % 47);
        break;
      default:
        v = static_cast<int64_t>(rng() % 10'000 + 1);
        for (int i = static_cast<int>(rng() % 15); i > 0; --i) {
          v *= 10;
        }
        break;
    }
    return v > max ? max : v;
  };
  for (int i = 0; i < 5000; ++i) {
    const int64_t b = draw(kMax);
    ASSERT_THAT(ParseBytes("f", FormatBytes(b)), IsOkAndHolds(b)) << b << " " << FormatBytes(b);
    const int64_t m = draw(kMaxCpuCores * 1000);
    ASSERT_THAT(ParseCpuMillis("f", FormatCpuMillis(m)), IsOkAndHolds(m))
        << m << " " << FormatCpuMillis(m);
  }
}

}  // namespace
}  // namespace gpuaas
