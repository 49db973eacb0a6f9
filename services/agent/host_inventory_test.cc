#include "services/agent/host_inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libs/testing/status_matchers.h"

namespace gpuaas::agent {
namespace {

using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;
using ::testing::Eq;
using ::testing::HasSubstr;

TEST(HostInventoryTest, CountsCpuinfoProcessors) {
  constexpr char kCpuinfo[] =
      "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Xeon\n\n"
      "processor\t: 1\nvendor_id\t: GenuineIntel\n\n"
      "processor : 2\n";
  EXPECT_EQ(CountCpuinfoProcessors(kCpuinfo), 3);
  // arm64 has a "processor" header line without an index on some kernels.
  EXPECT_EQ(CountCpuinfoProcessors("Processor\t: AArch64\nprocessors\t: 4\n"), 0);
  EXPECT_EQ(CountCpuinfoProcessors(""), 0);
}

TEST(HostInventoryTest, ParsesMemTotal) {
  EXPECT_THAT(ParseMemTotal("MemTotal:       16315800 kB\nMemFree:         1000 kB\n"),
              IsOkAndHolds(Eq(int64_t{16315800} * 1024)));
  EXPECT_THAT(ParseMemTotal("MemFree: 1 kB\nMemTotal: 2 kB"), IsOkAndHolds(Eq(2048)));
  EXPECT_THAT(ParseMemTotal("MemFree: 1 kB\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no MemTotal")));
  for (const char* bad : {"MemTotal: lots kB", "MemTotal: 12 MB", "MemTotal: -1 kB",
                          "MemTotal:", "MemTotal: 99999999999999999999 kB"}) {
    EXPECT_THAT(ParseMemTotal(bad), StatusIs(absl::StatusCode::kInvalidArgument)) << bad;
  }
}

TEST(HostInventoryTest, MeasuresThisHost) {
  ASSERT_OK_AND_ASSIGN(HostCapacity host, MeasureHost("/"));
  EXPECT_GE(host.cpu_millis, 1000);
  EXPECT_EQ(host.cpu_millis % 1000, 0);
  EXPECT_GT(host.memory_bytes, int64_t{64} << 20);
  EXPECT_GT(host.disk_bytes, 0);
  EXPECT_THAT(MeasureHost("/no/such/dir"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("--disk-path")));
}

TEST(HostInventoryTest, SimulatedNodesGetCapacityPerGpu) {
  HostCapacity eight = SimulatedCapacity(8);
  EXPECT_EQ(eight.cpu_millis, 128'000);
  EXPECT_EQ(eight.memory_bytes, int64_t{1} << 40);
  EXPECT_EQ(eight.disk_bytes, int64_t{8} << 40);
  EXPECT_EQ(SimulatedCapacity(0).cpu_millis, 16'000);
}

TEST(HostInventoryTest, OverridesReplaceOnlyWhatIsGiven) {
  const HostCapacity base{.cpu_millis = 8000, .memory_bytes = 1 << 30, .disk_bytes = 1 << 30};
  ASSERT_OK_AND_ASSIGN(HostCapacity same, ApplyOverrides(base, {}));
  EXPECT_EQ(same.cpu_millis, 8000);
  ASSERT_OK_AND_ASSIGN(HostCapacity out,
                       ApplyOverrides(base, {.cpu = "500m", .memory = "32Gi", .disk = "1.5Ti"}));
  EXPECT_EQ(out.cpu_millis, 500);
  EXPECT_EQ(out.memory_bytes, int64_t{32} << 30);
  EXPECT_EQ(out.disk_bytes, int64_t{3} << 39);
}

TEST(HostInventoryTest, BadOverridesNameTheFlag) {
  const HostCapacity base{.cpu_millis = 1000, .memory_bytes = 1, .disk_bytes = 1};
  EXPECT_THAT(ApplyOverrides(base, {.cpu = "1Ki"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--cpu")));
  EXPECT_THAT(ApplyOverrides(base, {.memory = "-1"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--memory")));
  EXPECT_THAT(ApplyOverrides(base, {.disk = "abc"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--disk")));
}

}  // namespace
}  // namespace gpuaas::agent
