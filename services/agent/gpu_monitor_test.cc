#include "services/agent/gpu_monitor.h"

#include <gtest/gtest.h>

#include <fstream>

#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/simulated_inventory.h"
#include "services/agent/simulated_source.h"

namespace gpuaas::agent {
namespace {

// A source whose devices do what the test says.
class ScriptedSource final : public GpuSource {
 public:
  explicit ScriptedSource(int n) : answering(n, true) {
    for (int i = 0; i < n; ++i) {
      gpus.push_back(GpuInfo{.index = i, .uuid = "GPU-" + std::to_string(i), .model = "T4"});
    }
  }
  absl::StatusOr<std::vector<GpuInfo>> Discover() override { return gpus; }
  absl::StatusOr<GpuReading> Read(int index) override {
    if (!answering[index]) {
      return absl::UnavailableError("GPU is lost");
    }
    ++reads;
    return GpuReading{.utilization_percent = 50.0 + index, .memory_used_mib = 100};
  }
  std::vector<XidEvent> TakeXids() override { return std::exchange(pending, {}); }
  absl::Status Probe(int index) override {
    ++probes;
    return answering[index] ? absl::OkStatus() : absl::UnavailableError("still lost");
  }

  std::vector<GpuInfo> gpus;
  std::vector<bool> answering;
  std::vector<XidEvent> pending;
  int reads = 0;
  int probes = 0;
};

class GpuMonitorTest : public ::testing::Test {
 protected:
  ScriptedSource source_{2};
  FakeClock clock_;
  GpuMonitor monitor_{source_, source_.gpus, clock_, {.reprobe_interval = absl::Seconds(30)}};

  GpuStatus Gpu(int i) { return monitor_.Snapshot()[i]; }
};

TEST_F(GpuMonitorTest, ReadsEveryGpu) {
  EXPECT_EQ(Gpu(1).reading.utilization_percent, 0);
  monitor_.Poll();
  EXPECT_EQ(Gpu(0).reading.utilization_percent, 50);
  EXPECT_EQ(Gpu(1).reading.utilization_percent, 51);
  EXPECT_TRUE(Gpu(0).healthy);
  EXPECT_EQ(Gpu(0).last_xid, 0);
}

TEST_F(GpuMonitorTest, HardwareXidMakesUnhealthyUntilAProbePassesAfterTheInterval) {
  monitor_.Poll();
  source_.pending = {{1, 79}};
  monitor_.Poll();
  EXPECT_FALSE(Gpu(1).healthy);
  EXPECT_EQ(Gpu(1).last_xid, 79);
  EXPECT_EQ(Gpu(1).xid_errors, 1);
  EXPECT_EQ(Gpu(0).xid_errors, 0);
  EXPECT_TRUE(Gpu(0).healthy);

  // Not re-probed before the interval is up.
  clock_.Advance(absl::Seconds(29));
  monitor_.Poll();
  EXPECT_EQ(source_.probes, 0);
  EXPECT_FALSE(Gpu(1).healthy);

  clock_.Advance(absl::Seconds(1));
  monitor_.Poll();
  EXPECT_EQ(source_.probes, 1);
  EXPECT_TRUE(Gpu(1).healthy);
  EXPECT_EQ(Gpu(1).last_xid, 79) << "the last XID stays reported";

  // The same XID again: last_xid cannot tell, the count does.
  source_.pending = {{1, 79}};
  monitor_.Poll();
  EXPECT_EQ(Gpu(1).xid_errors, 2);
}

TEST_F(GpuMonitorTest, ANewHardwareXidRestartsTheWait) {
  source_.pending = {{0, 48}};
  monitor_.Poll();
  clock_.Advance(absl::Seconds(20));
  source_.pending = {{0, 95}};
  monitor_.Poll();
  clock_.Advance(absl::Seconds(20));
  monitor_.Poll();
  EXPECT_FALSE(Gpu(0).healthy) << "only 20 s since the last XID";
  EXPECT_EQ(Gpu(0).last_xid, 95);
  clock_.Advance(absl::Seconds(10));
  monitor_.Poll();
  EXPECT_TRUE(Gpu(0).healthy);
}

TEST_F(GpuMonitorTest, ApplicationXidLeavesTheGpuHealthy) {
  source_.pending = {{0, 13}, {1, 43}};
  monitor_.Poll();
  EXPECT_TRUE(Gpu(0).healthy);
  EXPECT_EQ(Gpu(0).last_xid, 13);
  EXPECT_EQ(Gpu(1).last_xid, 43);
}

TEST_F(GpuMonitorTest, AGpuThatStopsAnsweringIsUnhealthyUntilItAnswersAgain) {
  monitor_.Poll();
  source_.answering[1] = false;
  monitor_.Poll();
  EXPECT_FALSE(Gpu(1).healthy);
  EXPECT_EQ(Gpu(1).reading.utilization_percent, 51) << "the last good reading stays";
  clock_.Advance(absl::Minutes(5));
  monitor_.Poll();
  EXPECT_FALSE(Gpu(1).healthy);

  source_.answering[1] = true;
  monitor_.Poll();
  EXPECT_FALSE(Gpu(1).healthy) << "a quiet interval first";
  clock_.Advance(absl::Seconds(30));
  monitor_.Poll();
  EXPECT_TRUE(Gpu(1).healthy);
}

TEST_F(GpuMonitorTest, XidsForUnknownGpusAreIgnored) {
  source_.pending = {{7, 79}, {-1, 79}};
  monitor_.Poll();
  EXPECT_TRUE(Gpu(0).healthy);
  EXPECT_TRUE(Gpu(1).healthy);
}

TEST(GpuMonitorSimulatedTest, FaultFileTurnsAGpuUnhealthyThenHealthy) {
  gpuaas::testing::TempDir dir;
  const std::string faults = (dir.path() / "faults").string();
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> gpus, ParseSimulatedGpus("2xA100-80GB", "n"));
  SimulatedGpuSource source(gpus, faults);
  FakeClock clock;
  GpuMonitor monitor(source, gpus, clock, {.reprobe_interval = absl::Seconds(5)});
  monitor.Poll();
  EXPECT_GT(monitor.Snapshot()[0].reading.power_watts, 0);

  std::ofstream(faults) << gpus[1].uuid << " 74\n";
  monitor.Poll();
  EXPECT_FALSE(monitor.Snapshot()[1].healthy);
  clock.Advance(absl::Seconds(10));
  monitor.Poll();
  EXPECT_FALSE(monitor.Snapshot()[1].healthy) << "still listed";

  std::ofstream(faults, std::ios::trunc) << "";
  clock.Advance(absl::Seconds(5));
  monitor.Poll();
  EXPECT_TRUE(monitor.Snapshot()[1].healthy);
  EXPECT_EQ(monitor.Snapshot()[1].last_xid, 74);
}

}  // namespace
}  // namespace gpuaas::agent
