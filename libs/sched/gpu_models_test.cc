#include "libs/sched/gpu_models.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "libs/sched/mig.h"

namespace gpuaas::sched {
namespace {

TEST(GpuModels, NvmlNamesMapToCanonicalOnes) {
  const std::pair<const char*, const char*> kCases[] = {
      {"NVIDIA A100-SXM4-80GB", "A100-80GB"},
      {"NVIDIA A100-SXM4-40GB", "A100-40GB"},
      {"NVIDIA A100-PCIE-40GB", "A100-40GB"},
      {"NVIDIA A100 80GB PCIe", "A100-80GB"},
      {"NVIDIA H100 80GB HBM3", "H100-80GB"},
      {"NVIDIA H100-SXM5-80GB", "H100-80GB"},
      {"NVIDIA H200", "H200-141GB"},
      {"Tesla T4", "T4"},
      {"NVIDIA A10", "A10"},
      {"NVIDIA A30", "A30"},
      {"NVIDIA A40", "A40"},
      {"NVIDIA L4", "L4"},
      {"NVIDIA L40S", "L40S"},
      {"Tesla V100-SXM2-32GB", "V100M32"},
      {"Tesla V100-PCIE-16GB", "V100M16"},
      {"Tesla P100-PCIE-16GB", "P100"},
      {"A100-80GB", "A100-80GB"},
      {"G2", "G2"},
      {"nvidia a100-sxm4-80gb", "A100-80GB"},  // NVML spellings are matched case-blind
  };
  for (const auto& [nvml, want] : kCases) {
    EXPECT_EQ(CanonicalGpuModel(nvml), std::optional<std::string_view>(want)) << nvml;
  }
}

TEST(GpuModels, UnknownGpusStayUnknown) {
  for (const char* name :
       {"", "NVIDIA GeForce RTX 4090", "NVIDIA A10G", "NVIDIA H100 NVL", "Radeon"}) {
    EXPECT_EQ(CanonicalGpuModel(name), std::nullopt) << name;
  }
  EXPECT_EQ(FindGpuModel("a100-80gb"), nullptr);  // canonical names are case-sensitive
}

TEST(GpuModels, MigFlagAgreesWithTheMigGeometry) {
  for (const GpuModel& m : KnownGpuModels()) {
    EXPECT_EQ(m.mig, FindMigGeometry(absl::string_view(m.name.data(), m.name.size())) != nullptr)
        << m.name;
    EXPECT_EQ(CanonicalGpuModel(m.name), std::optional<std::string_view>(m.name));
  }
}

TEST(GpuModels, NamesAreUnique) {
  std::set<std::string_view> names;
  for (const GpuModel& m : KnownGpuModels()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
  }
}

// The openb trace's nodes (bench/sched) must all be placeable by spec: every model known.
TEST(GpuModels, EveryOpenbModelIsKnown) {
  std::ifstream in(SCHED_TESTDATA_DIR "/openb_nodes_small.csv");
  ASSERT_TRUE(in) << "missing test data";
  std::string line;
  std::getline(in, line);  // header: ..., model last
  int rows = 0;
  while (std::getline(in, line)) {
    const std::string model = line.substr(line.rfind(',') + 1);
    if (model.empty()) continue;  // CPU-only nodes
    EXPECT_NE(FindGpuModel(model), nullptr) << model;
    ++rows;
  }
  EXPECT_GT(rows, 0);
}

}  // namespace
}  // namespace gpuaas::sched
