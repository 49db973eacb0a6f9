#include "libs/gpu/gpu_models.h"

#include <gtest/gtest.h>

#include <set>

namespace gpuaas::gpu {
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

TEST(GpuModels, NamesAreUnique) {
  std::set<std::string_view> names;
  for (const GpuModel& m : KnownGpuModels()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
  }
}

}  // namespace
}  // namespace gpuaas::gpu
