// Model-pinned requests: fgd-pack leaves the models pinned requests need to them, and the
// per-model free capacity it reads (ModelCapacity) follows every kind of node change.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "libs/sched/internal/cluster.h"
#include "libs/sched/scheduler.h"

namespace gpuaas::sched {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// fgd-pack as it was before model pressure.
constexpr char kWithoutPressure[] =
    "fgd:quantum=100:untouched=0.5:cpupack=0.4:unbacked=0.2:unusable=1:common=0.01";

NodeSpec Node(const std::string& name, int gpus, const std::string& model, int64_t cpu) {
  NodeSpec n{.name = name, .cpu_milli = cpu, .memory_bytes = 512 * kGiB};
  for (int i = 0; i < gpus; ++i) {
    n.gpus.push_back(GpuSpec{.index = i, .model = model});
  }
  return n;
}

Request WholeGpu(int64_t cpu, std::vector<std::string> models = {}) {
  return Request{
      .cpu_milli = cpu, .memory_bytes = 8 * kGiB, .gpu_count = 1, .gpu_models = std::move(models)};
}

// A miniature openb: a big CPU-poor model (G2, 12 cores per GPU) and a small CPU-rich one (T4,
// 52 cores per GPU). A third of the GPU requests are pinned to each model, a third may go
// anywhere, interleaved; they ask exactly for the capacity, so all fit only if the flexible ones
// stay on G2. (Online learning needs to have seen a pinned request before it can protect its
// model, hence the pinned ones first in each round.) Returns how many requests found no room.
int Unplaced(const std::string& policy) {
  auto s = Scheduler::Create({.policy = policy});
  EXPECT_TRUE(s.ok()) << s.status();
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE((*s)->AddNode(Node(absl::StrCat("t4-", i), 2, "T4", 104000)).ok());
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE((*s)->AddNode(Node(absl::StrCat("g2-", i), 8, "G2", 96000)).ok());
  }
  int unplaced = 0;
  for (int round = 0; round < 8; ++round) {
    for (const Request& r : {WholeGpu(8000, {"T4"}), WholeGpu(8000, {"G2"}), WholeGpu(16000)}) {
      unplaced += (*s)->Place(r).ok() ? 0 : 1;
    }
  }
  return unplaced;
}

TEST(Pinned, FgdPackLeavesPinnedModelsToPinnedRequests) {
  EXPECT_EQ(Unplaced("fgd-pack"), 0);
  // The scenario still shows the problem: without pressure, the flexible requests' CPU draws
  // them to the CPU-rich T4 nodes, and T4-pinned requests are stranded.
  EXPECT_GT(Unplaced(kWithoutPressure), 0);
}

TEST(ModelCapacity, FollowsPlacementsHealthSchedulabilityAndRemoval) {
  internal::Cluster c;
  ASSERT_TRUE(c.AddNode(Node("a", 2, "T4", 64000)).ok());
  ASSERT_TRUE(c.AddNode(Node("b", 8, "G2", 96000)).ok());
  const int16_t t4 = c.models().Find("T4");
  const int16_t g2 = c.models().Find("G2");
  const internal::ModelCapacity& cap = c.capacity();
  EXPECT_EQ(cap.cap_milli(t4), 2000);
  EXPECT_EQ(cap.cap_milli(g2), 8000);
  EXPECT_EQ(cap.total_free_milli(), 10000);

  const uint32_t a = *c.Find("a");
  Placement p{.node = "a", .gpus = {{.index = 0, .milli = 500}}, .cpu_milli = 1000};
  p.node_incarnation = c.node(a).incarnation;
  c.Apply(a, p);
  EXPECT_EQ(cap.free_milli(t4), 1500);
  EXPECT_EQ(cap.total_free_milli(), 9500);

  ASSERT_TRUE(c.SetGpuHealth("a", 1, false).ok());  // an unhealthy GPU offers nothing
  EXPECT_EQ(cap.free_milli(t4), 500);
  EXPECT_EQ(cap.cap_milli(t4), 1000);
  ASSERT_TRUE(c.SetSchedulable("b", false).ok());
  EXPECT_EQ(cap.free_milli(g2), 0);
  EXPECT_EQ(cap.cap_milli(g2), 0);
  ASSERT_TRUE(c.SetSchedulable("b", true).ok());
  EXPECT_EQ(cap.free_milli(g2), 8000);

  ASSERT_TRUE(c.Undo(p).ok());
  EXPECT_EQ(cap.free_milli(t4), 1000);
  ASSERT_TRUE(c.RemoveNode("a").ok());
  EXPECT_EQ(cap.free_milli(t4), 0);
  EXPECT_EQ(cap.cap_milli(t4), 0);
  ASSERT_TRUE(c.AddNode(Node("c", 4, "T4", 64000)).ok());  // reuses a's slot
  EXPECT_EQ(cap.free_milli(t4), 4000);
  EXPECT_EQ(cap.total_free_milli(), 12000);
  EXPECT_EQ(cap.free_milli(c.models().Find("nope")), 0);
}

}  // namespace
}  // namespace gpuaas::sched
