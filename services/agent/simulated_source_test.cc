#include "services/agent/simulated_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "libs/gpu/gpu_models.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/fault_file.h"
#include "services/agent/simulated_inventory.h"

namespace gpuaas::agent {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

TEST(SimulatedInventoryTest, ParsesOneModel) {
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> gpus, ParseSimulatedGpus("8xA100-80GB", "node-a"));
  ASSERT_EQ(gpus.size(), 8u);
  std::set<std::string> uuids;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(gpus[i].index, i);
    EXPECT_EQ(gpus[i].model, "A100-80GB");
    EXPECT_EQ(gpus[i].nvml_name, "NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(gpus[i].memory_mib, 80 * 1024);
    EXPECT_FALSE(gpus[i].mig_enabled);
    EXPECT_THAT(gpus[i].uuid,
                MatchesRegex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"));
    uuids.insert(gpus[i].uuid);
  }
  EXPECT_EQ(uuids.size(), 8u);
}

TEST(SimulatedInventoryTest, ParsesMixedGroupsInOrder) {
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> gpus, ParseSimulatedGpus("2xA100-80GB,2xT4", "n"));
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[1].model, "A100-80GB");
  EXPECT_EQ(gpus[2].model, "T4");
  EXPECT_EQ(gpus[2].index, 2);
  EXPECT_EQ(gpus[3].memory_mib, 16 * 1024);
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> t4, ParseSimulatedGpus("4xT4", "n"));
  EXPECT_EQ(t4.size(), 4u);
}

TEST(SimulatedInventoryTest, UuidsAreStablePerNodeAndDistinctAcrossNodes) {
  EXPECT_EQ(SimulatedGpuUuid("sim-a100-1", 3), SimulatedGpuUuid("sim-a100-1", 3));
  EXPECT_NE(SimulatedGpuUuid("sim-a100-1", 3), SimulatedGpuUuid("sim-a100-2", 3));
  EXPECT_NE(SimulatedGpuUuid("sim-a100-1", 3), SimulatedGpuUuid("sim-a100-1", 4));
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> once, ParseSimulatedGpus("2xT4", "n1"));
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> again, ParseSimulatedGpus("2xT4", "n1"));
  EXPECT_EQ(once[1].uuid, again[1].uuid);
}

TEST(SimulatedInventoryTest, RefusesBadSpecsNamingTheFlag) {
  for (const char* bad : {"", "0xT4", "8xNOPE", "8", "x", "xT4", "8x", "8xT4,", "-1xT4", "65xT4",
                          "40xT4,40xT4", "8xt4", "8xG2", "1.5xT4", "8 xT4"}) {
    EXPECT_THAT(ParseSimulatedGpus(bad, "n"),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--simulate-gpus")))
        << bad;
  }
  EXPECT_THAT(ParseSimulatedGpus("8xNOPE", "n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown GPU model")));
  EXPECT_THAT(ParseSimulatedGpus("0xT4", "n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("count")));
}

TEST(SimulatedInventoryTest, EverySimulatedModelIsCanonicalUnderItsNvmlName) {
  for (const gpu::GpuModel& m : gpu::KnownGpuModels()) {
    const SimulatedModel* sim = FindSimulatedModel(m.name);
    if (m.memory_gib == 0) {
      EXPECT_EQ(sim, nullptr) << m.name;  // the trace's anonymised models
      continue;
    }
    ASSERT_NE(sim, nullptr) << m.name;
    EXPECT_EQ(gpu::CanonicalGpuModel(sim->nvml_name), m.name);
    EXPECT_LT(sim->idle_watts, sim->max_watts);
  }
}

TEST(SimulatedSourceTest, ReadingsWanderWithinEachModelsRange) {
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> gpus, ParseSimulatedGpus("1xH100-80GB,1xT4", "n"));
  SimulatedGpuSource source(gpus, "");
  std::set<double> utilizations;
  for (int round = 0; round < 500; ++round) {
    for (int i = 0; i < 2; ++i) {
      ASSERT_OK_AND_ASSIGN(GpuReading r, source.Read(i));
      const SimulatedModel* m = FindSimulatedModel(gpus[i].model);
      EXPECT_GE(r.utilization_percent, 0);
      EXPECT_LE(r.utilization_percent, 100);
      EXPECT_GT(r.memory_used_mib, 0);
      EXPECT_LT(r.memory_used_mib, gpus[i].memory_mib);
      EXPECT_GE(r.temperature_celsius, 25);
      EXPECT_LE(r.temperature_celsius, 90);
      EXPECT_GE(r.power_watts, m->idle_watts * 0.9);
      EXPECT_LE(r.power_watts, m->max_watts);
      if (i == 0) {
        utilizations.insert(r.utilization_percent);
      }
    }
  }
  EXPECT_GT(utilizations.size(), 20u) << "the readings should vary";
  EXPECT_THAT(source.Read(2), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SimulatedSourceTest, SameNodeSameReadings) {
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> gpus, ParseSimulatedGpus("1xA100-80GB", "n"));
  SimulatedGpuSource a(gpus, "");
  SimulatedGpuSource b(gpus, "");
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(a.Read(0)->utilization_percent, b.Read(0)->utilization_percent);
  }
}

TEST(FaultFileTest, ParsesIndexAndUuidLinesAndReportsBadOnes) {
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> gpus, ParseSimulatedGpus("4xT4", "n"));
  const std::string text = "# comment\n\n1 79\n" + gpus[2].uuid +
                           "\t13\n  \n7 48\nGPU-nope 48\n0\n0 x\n0 -3\n3 48 extra\n";
  ParsedFaults parsed = ParseFaults(text, gpus);
  ASSERT_EQ(parsed.faults.size(), 2u);
  EXPECT_EQ(parsed.faults[0].index, 1);
  EXPECT_EQ(parsed.faults[0].xid, 79);
  EXPECT_EQ(parsed.faults[1].index, 2);
  EXPECT_EQ(parsed.faults[1].xid, 13);
  ASSERT_EQ(parsed.errors.size(), 6u);
  EXPECT_THAT(parsed.errors[0], HasSubstr("line 6"));
}

TEST(UtilizationFileTest, PinsListedGpusAndReportsBadLines) {
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> gpus, ParseSimulatedGpus("2xT4", "n"));
  ParsedUtilization parsed =
      ParseUtilization("# idle\n0 0\n" + gpus[1].uuid + " 97.5\n0 101\n5 3\nx\n", gpus);
  ASSERT_EQ(parsed.pinned.size(), 2u);
  EXPECT_EQ(parsed.pinned[0], std::make_pair(0, 0.0));
  EXPECT_EQ(parsed.pinned[1], std::make_pair(1, 97.5));
  EXPECT_EQ(parsed.errors.size(), 3u);

  gpuaas::testing::TempDir dir;
  const std::string file = (dir.path() / "utilization").string();
  SimulatedGpuSource source(gpus, "", file);
  std::ofstream(file) << "1 2\n";
  for (int i = 0; i < 5; ++i) EXPECT_EQ(source.Read(1)->utilization_percent, 2);
}

TEST(SimulatedSourceTest, FaultFileRaisesXidsAndHoldsProbesWhileListed) {
  gpuaas::testing::TempDir dir;
  const std::string faults = (dir.path() / "faults").string();
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> gpus, ParseSimulatedGpus("2xT4", "n"));
  SimulatedGpuSource source(gpus, faults);
  // No file yet: no faults.
  EXPECT_TRUE(source.TakeXids().empty());
  EXPECT_OK(source.Probe(1));

  std::ofstream(faults) << "1 79\n0 13\n";
  std::vector<XidEvent> xids = source.TakeXids();
  ASSERT_EQ(xids.size(), 2u);
  EXPECT_EQ(xids[0].index, 1);
  EXPECT_EQ(xids[0].xid, 79);
  // While listed, the XID comes again and again, and a hardware XID fails the probe.
  EXPECT_EQ(source.TakeXids().size(), 2u);
  EXPECT_THAT(source.Probe(1), StatusIs(absl::StatusCode::kUnavailable, HasSubstr("79")));
  EXPECT_OK(source.Probe(0));  // XID 13 is the application's fault

  std::ofstream(faults, std::ios::trunc) << "# repaired\n";
  EXPECT_TRUE(source.TakeXids().empty());
  EXPECT_OK(source.Probe(1));
}

}  // namespace
}  // namespace gpuaas::agent
