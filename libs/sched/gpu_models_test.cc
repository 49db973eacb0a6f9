// The GPU model table (libs/gpu) agrees with what the placement engine and its trace know.
#include "libs/gpu/gpu_models.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "libs/sched/mig.h"

namespace gpuaas::sched {
namespace {

TEST(GpuModels, MigFlagAgreesWithTheMigGeometry) {
  for (const gpu::GpuModel& m : gpu::KnownGpuModels()) {
    EXPECT_EQ(m.mig, FindMigGeometry(absl::string_view(m.name.data(), m.name.size())) != nullptr)
        << m.name;
    EXPECT_EQ(gpu::CanonicalGpuModel(m.name), std::optional<std::string_view>(m.name));
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
    EXPECT_NE(gpu::FindGpuModel(model), nullptr) << model;
    ++rows;
  }
  EXPECT_GT(rows, 0);
}

}  // namespace
}  // namespace gpuaas::sched
