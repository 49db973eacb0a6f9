// A small fixed-seed openb replay (every 10th GPU node, 800 pods; libs/sched/testdata): every
// policy's placements pass an independent checker, and FGD leaves fewer GPUs unallocated than
// random.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "libs/sched/replay/trace_replay.h"

namespace gpuaas::sched::replay {
namespace {

std::string Read(const std::string& name) {
  std::ifstream in(std::string(SCHED_TESTDATA_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto nodes = ParseOpenbNodes(Read("openb_nodes_small.csv"));
    auto pods = ParseOpenbPods(Read("openb_pods_small.csv"));
    ASSERT_TRUE(nodes.ok()) << nodes.status();
    ASSERT_TRUE(pods.ok()) << pods.status();
    nodes_ = *nodes;
    pods_ = *pods;
    ASSERT_EQ(nodes_.size(), 122u);
    ASSERT_EQ(pods_.size(), 800u);
  }

  // Recomputes every node's usage from the decisions alone, sharing no code with the library.
  struct Used {
    int64_t cpu = 0, mem = 0;
    std::vector<int32_t> gpu;
  };
  void Check(const std::string& policy, uint64_t seed, bool oracle, double* unalloc) {
    ReplayOptions ro{.policy = policy, .seed = seed, .oracle_workload = oracle};
    auto replay = TraceReplay::Create(nodes_, pods_, ro);
    ASSERT_TRUE(replay.ok()) << replay.status();
    absl::flat_hash_map<std::string, const TraceNode*> by_name;
    absl::flat_hash_map<std::string, Used> used;
    int64_t capacity = 0;
    for (const TraceNode& n : nodes_) {
      if (n.gpus > 0) {
        by_name[n.name] = &n;
        used[n.name].gpu.assign(n.gpus, 0);
        capacity += n.gpus * 1000;
      }
    }
    int64_t demand = 0, allocated = 0;
    double unalloc_at_100 = NAN;
    const ReplayResult result = (*replay)->Run([&](const Decision& d) {
      const TracePod& pod = pods_[d.pod];
      demand += pod.GpuDemandMilli();
      if (d.placement != nullptr) {
        const Placement& p = *d.placement;
        ASSERT_TRUE(by_name.contains(p.node)) << policy;
        const TraceNode& n = *by_name[p.node];
        if (!pod.gpu_spec.empty()) {
          ASSERT_NE(std::find(pod.gpu_spec.begin(), pod.gpu_spec.end(), n.model),
                    pod.gpu_spec.end())
              << policy << ": " << pod.name << " on a " << n.model;
        }
        Used& u = used[p.node];
        u.cpu += pod.cpu_milli;
        u.mem += pod.memory_mib;
        ASSERT_LE(u.cpu, n.cpu_milli) << policy << " " << p.node;
        ASSERT_LE(u.mem, n.memory_mib) << policy << " " << p.node;
        ASSERT_EQ(static_cast<int32_t>(p.gpus.size()), pod.num_gpu) << policy;
        for (size_t i = 0; i < p.gpus.size(); ++i) {
          const GpuAssignment& g = p.gpus[i];
          ASSERT_GE(g.index, 0);
          ASSERT_LT(g.index, n.gpus);
          ASSERT_EQ(g.milli, pod.gpu_milli) << policy;
          for (size_t j = 0; j < i; ++j) {
            ASSERT_NE(p.gpus[j].index, g.index) << policy;
          }
          if (g.milli == 1000) {
            ASSERT_EQ(u.gpu[g.index], 0) << policy << ": whole GPU on a touched GPU";
          }
          u.gpu[g.index] += g.milli;
          ASSERT_LE(u.gpu[g.index], 1000) << policy;
        }
        if (!pod.gpu_spec.empty()) {
          ASSERT_NE(std::find(pod.gpu_spec.begin(), pod.gpu_spec.end(), n.model),
                    pod.gpu_spec.end());
        }
        allocated += pod.GpuDemandMilli();
      }
      if (std::isnan(unalloc_at_100) && demand >= capacity) {
        unalloc_at_100 = 100.0 * (1.0 - static_cast<double>(allocated) / capacity);
      }
    });
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(result.capacity_milli, capacity);
    EXPECT_NEAR(result.unalloc_at_100, unalloc_at_100, 1e-9) << policy;
    EXPECT_NEAR(result.alloc_at_130, 100.0 * allocated / capacity, 1e-9) << policy;
    EXPECT_GE(demand, static_cast<int64_t>(1.3 * capacity) - 1000);
    *unalloc = unalloc_at_100;
  }

  std::vector<TraceNode> nodes_;
  std::vector<TracePod> pods_;
};

TEST_F(ReplayTest, EveryPolicyPassesTheIndependentChecker) {
  for (const std::string& policy : PolicyNames()) {
    for (bool oracle : {true, false}) {
      double unalloc = 0;
      Check(policy, 42, oracle, &unalloc);
      ASSERT_FALSE(HasFatalFailure()) << policy;
      EXPECT_GE(unalloc, 0) << policy;
    }
  }
}

TEST_F(ReplayTest, EveryPolicyHonoursPinnedModels) {
  pods_ = PinToOneModel(pods_, nodes_, 0.5, 1);
  for (const std::string& policy : PolicyNames()) {
    double unalloc = 0;
    Check(policy, 42, false, &unalloc);
    ASSERT_FALSE(HasFatalFailure()) << policy;
  }
}

TEST_F(ReplayTest, PinningPinsTheShareAskedToModelsThatCanHost) {
  int64_t gpu_pods = 0;
  for (const TracePod& p : pods_) {
    gpu_pods += p.num_gpu > 0 ? 1 : 0;
  }
  const std::vector<TracePod> all = PinToOneModel(pods_, nodes_, 1, 1);
  const std::vector<TracePod> third = PinToOneModel(pods_, nodes_, 1.0 / 3, 1);
  const std::vector<TracePod> like = PinLikeSpecs(pods_, nodes_, third, 0.5, 2);
  int64_t pinned_all = 0, pinned_third = 0, pinned_like = 0;
  for (size_t i = 0; i < pods_.size(); ++i) {
    ASSERT_EQ(all[i].cpu_milli, pods_[i].cpu_milli);
    if (pods_[i].num_gpu == 0) {
      EXPECT_TRUE(all[i].gpu_spec.empty());
      EXPECT_TRUE(like[i].gpu_spec.empty());
      continue;
    }
    pinned_all += all[i].gpu_spec.size() == 1 ? 1 : 0;
    pinned_third += third[i].gpu_spec.empty() ? 0 : 1;
    pinned_like += like[i].gpu_spec.empty() ? 0 : 1;
    for (const std::string& model : all[i].gpu_spec) {
      const bool hostable = std::any_of(nodes_.begin(), nodes_.end(), [&](const TraceNode& n) {
        return n.model == model && n.gpus >= pods_[i].num_gpu &&
               n.cpu_milli >= pods_[i].cpu_milli && n.memory_mib >= pods_[i].memory_mib;
      });
      EXPECT_TRUE(hostable) << pods_[i].name << " pinned to " << model;
    }
  }
  EXPECT_EQ(pinned_all, gpu_pods);  // every GPU pod of this trace fits some node
  EXPECT_EQ(pinned_third, std::llround(gpu_pods / 3.0));
  EXPECT_EQ(pinned_like, std::llround(gpu_pods / 2.0));
  // Seeded: the same derivation twice is the same trace.
  const std::vector<TracePod> again = PinToOneModel(pods_, nodes_, 1.0 / 3, 1);
  for (size_t i = 0; i < pods_.size(); ++i) {
    EXPECT_EQ(again[i].gpu_spec, third[i].gpu_spec);
  }
}

TEST_F(ReplayTest, FgdLeavesFewerGpusUnallocatedThanRandom) {
  double fgd = 0, random = 0;
  for (uint64_t seed = 42; seed < 45; ++seed) {
    double u = 0;
    Check("fgd", seed, true, &u);
    fgd += u;
    Check("random", seed, true, &u);
    random += u;
  }
  EXPECT_LT(fgd, random);
}

TEST_F(ReplayTest, SameSeedSameDecisions) {
  auto run = [&] {
    auto r = TraceReplay::Create(nodes_, pods_, {.policy = "fgd", .seed = 7});
    std::vector<std::string> out;
    (*r)->Run([&](const Decision& d) {
      out.push_back(
          d.placement
              ? d.placement->node + ":" +
                    std::to_string(d.placement->gpus.empty() ? -1 : d.placement->gpus[0].index)
              : "-");
    });
    return out;
  };
  EXPECT_EQ(run(), run());
}

TEST(OpenbTrace, AcceptsGpuSpecAndNewModels) {
  auto nodes = ParseOpenbNodes("sn,cpu_milli,memory_mib,gpu,model\nx,8000,1024,2,H100\n");
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ((*nodes)[0].model, "H100");
  auto pods = ParseOpenbPods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\np,1000,10,1,500,H100|A10,LS\n");
  ASSERT_TRUE(pods.ok());
  EXPECT_EQ((*pods)[0].gpu_spec, (std::vector<std::string>{"H100", "A10"}));
  EXPECT_FALSE(ParseOpenbPods("name,cpu_milli\n").ok());
  EXPECT_FALSE(ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,x,1,1,1\n").ok());
  EXPECT_FALSE(ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,2,500\n").ok());
}

}  // namespace
}  // namespace gpuaas::sched::replay
