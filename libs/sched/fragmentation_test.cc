// FragmentationMeasure's longer-sighted measures (Unusable, Unbacked) and the per-shape memory
// mean they rely on, on hand-computed cases.
#include "libs/sched/policies/fragmentation.h"

#include <vector>

#include "gtest/gtest.h"
#include "libs/sched/internal/node_state.h"
#include "libs/sched/workload.h"

namespace gpuaas::sched {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

WorkloadShape Shape(int64_t cpu, int32_t milli, int64_t memory, double p) {
  return WorkloadShape{.cpu_milli = cpu,
                       .gpu_count = 1,
                       .gpu_milli = milli,
                       .probability = p,
                       .memory_bytes = memory};
}

class MeasureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = models_.Intern("G2");
    // 60 % whole GPUs at 8 cores / 8 GiB, 35 % half GPUs at 4 cores / 4 GiB, 5 % tiny shares
    // at 1 core / 1 GiB.
    workload_.shapes = {Shape(8000, 1000, 8 * kGiB, 0.6), Shape(4000, 500, 4 * kGiB, 0.35),
                        Shape(1000, 100, 1 * kGiB, 0.05)};
  }
  std::vector<FragGpu> Gpus(std::vector<int32_t> free) const {
    std::vector<FragGpu> out;
    for (int32_t f : free) out.push_back({f, model_});
    return out;
  }

  internal::ModelRegistry models_;
  int16_t model_ = 0;
  Workload workload_;
};

TEST_F(MeasureTest, UnusableCountsSharesNoCommonShapeFits) {
  FragmentationMeasure m;
  m.Compile(workload_, models_, /*common_share=*/0);
  const auto gpus = Gpus({1000, 600, 50, 0});
  // Plenty of CPU and memory: only the 50-milli share is too small for every shape.
  EXPECT_DOUBLE_EQ(m.Unusable(64000, 64 * kGiB, gpus), 50);
  // 2 cores left: only the tiny shape still fits, on the two larger shares.
  EXPECT_DOUBLE_EQ(m.Unusable(2000, 64 * kGiB, gpus), 50);
  // Half a core left: nothing fits anywhere.
  EXPECT_DOUBLE_EQ(m.Unusable(500, 64 * kGiB, gpus), 1650);
  // Memory runs out the same way.
  EXPECT_DOUBLE_EQ(m.Unusable(64000, kGiB / 2, gpus), 1650);
}

TEST_F(MeasureTest, UnusableIgnoresRareShapes) {
  FragmentationMeasure m;
  m.Compile(workload_, models_, /*common_share=*/0.1);
  // With 2 cores only the tiny shape (5 % of M) fits: not common enough to count on.
  EXPECT_DOUBLE_EQ(m.Unusable(2000, 64 * kGiB, Gpus({1000, 600})), 1600);
  EXPECT_DOUBLE_EQ(m.Unusable(64000, 64 * kGiB, Gpus({1000, 600})), 0);
}

TEST_F(MeasureTest, UnbackedIsGpuShareBeyondWhatCpuAndMemoryCanServe) {
  FragmentationMeasure m;
  m.Compile(workload_, models_);
  // Per milli-GPU, M asks 0.6*8000+0.35*4000+0.05*1000 = 6250 millicores over
  // 0.6*1000+0.35*500+0.05*100 = 780 milli: ~8.01 millicores (and ~8.6 MB) per milli-GPU.
  const double cpu_per_milli = 6250.0 / 780.0;
  const auto gpus = Gpus({1000, 1000});
  EXPECT_DOUBLE_EQ(m.Unbacked(64000, 64 * kGiB, gpus), 0);
  EXPECT_NEAR(m.Unbacked(8000, 64 * kGiB, gpus), 2000 - 8000 / cpu_per_milli, 1e-9);
  EXPECT_DOUBLE_EQ(m.Unbacked(0, 64 * kGiB, gpus), 2000);
  EXPECT_DOUBLE_EQ(m.Unbacked(64000, 0, gpus), 2000);
}

TEST(ShapeCounterTest, ShapesCarryTheirRequestsMeanMemory) {
  ShapeCounter c;
  c.Add(Request{.cpu_milli = 4000, .memory_bytes = 2 * kGiB, .gpu_count = 1, .gpu_milli = 500});
  c.Add(Request{.cpu_milli = 4000, .memory_bytes = 4 * kGiB, .gpu_count = 1, .gpu_milli = 500});
  const Workload w = c.Typical(1.0);
  ASSERT_EQ(w.shapes.size(), 1u);  // memory does not split shapes
  EXPECT_EQ(w.shapes[0].memory_bytes, 3 * kGiB);
  EXPECT_DOUBLE_EQ(w.shapes[0].probability, 1.0);
}

}  // namespace
}  // namespace gpuaas::sched
