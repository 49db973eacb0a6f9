// Each feasibility rule, through the public Scheduler API.
#include <memory>

#include "gtest/gtest.h"
#include "libs/sched/scheduler.h"

namespace gpuaas::sched {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

NodeSpec Node(const std::string& name, int gpus, const std::string& model = "A100-40GB",
              int64_t cpu = 64000, int64_t mem = 256 * kGiB, int64_t disk = 1000 * kGiB) {
  NodeSpec n{.name = name, .cpu_milli = cpu, .memory_bytes = mem, .disk_bytes = disk};
  for (int i = 0; i < gpus; ++i) {
    n.gpus.push_back(GpuSpec{.index = i, .model = model});
  }
  return n;
}

Request Gpu(int count, int milli = 1000, int64_t cpu = 1000) {
  return Request{.cpu_milli = cpu, .memory_bytes = kGiB, .gpu_count = count, .gpu_milli = milli};
}

std::unique_ptr<Scheduler> Make(const std::vector<NodeSpec>& nodes,
                                const std::string& policy = "best-fit") {
  auto s = Scheduler::Create({.policy = policy});
  EXPECT_TRUE(s.ok()) << s.status();
  for (const NodeSpec& n : nodes) {
    EXPECT_TRUE((*s)->AddNode(n).ok());
  }
  return *std::move(s);
}

TEST(Feasibility, WholeGpuOnlyOnUntouchedGpu) {
  auto s = Make({Node("n", 1)});
  ASSERT_TRUE(s->Place(Gpu(1, 1)).ok());
  auto p = s->Place(Gpu(1));
  EXPECT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted);
  auto why = s->Explain(Gpu(1));
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->gpu_count, 1);
}

TEST(Feasibility, SharesAtTheEdges) {
  auto s = Make({Node("n", 1)});
  auto a = s->Place(Gpu(1, 999));
  ASSERT_TRUE(a.ok());
  auto b = s->Place(Gpu(1, 1));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(s->Place(Gpu(1, 1)).status().code(), absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(s->Release(*a).ok());
  ASSERT_TRUE(s->Place(Gpu(1, 500)).ok());
  ASSERT_TRUE(s->Place(Gpu(1, 499)).ok());
  EXPECT_FALSE(s->Place(Gpu(1, 1)).ok());

  auto t = Make({Node("m", 1)});
  ASSERT_TRUE(t->Place(Gpu(1, 500)).ok());
  ASSERT_TRUE(t->Place(Gpu(1, 500)).ok());
  auto why = t->Explain(Gpu(1, 1));
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->gpu_share, 1);
  EXPECT_FALSE(t->Place(Gpu(1, 1)).ok());
}

TEST(Feasibility, ShareUsesOneGpuWithRoom) {
  auto s = Make({Node("n", 2)});
  auto a = s->Place(Gpu(1, 600));
  auto b = s->Place(Gpu(1, 600));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->gpus[0].index, b->gpus[0].index);
  EXPECT_EQ(a->gpus[0].milli, 600);
}

TEST(Feasibility, MultiGpuOnlyOnWholeGpusOfOneNode) {
  auto s = Make({Node("a", 2), Node("b", 2)});
  EXPECT_FALSE(s->Place(Gpu(3)).ok());
  auto p = s->Place(Gpu(2));
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->gpus.size(), 2u);
  EXPECT_NE(p->gpus[0].index, p->gpus[1].index);
  ASSERT_TRUE(s->Place(Gpu(1, 100)).ok());  // touches one GPU of the other node
  EXPECT_FALSE(s->Place(Gpu(2)).ok());
}

TEST(Feasibility, NeverBeyondCpuMemoryDisk) {
  auto s = Make({Node("n", 0, "", 4000, 8 * kGiB, 10 * kGiB)});
  EXPECT_FALSE(s->Place(Request{.cpu_milli = 4001}).ok());
  EXPECT_FALSE(s->Place(Request{.memory_bytes = 8 * kGiB + 1}).ok());
  EXPECT_FALSE(s->Place(Request{.disk_bytes = 10 * kGiB + 1}).ok());
  ASSERT_TRUE(
      s->Place(Request{.cpu_milli = 4000, .memory_bytes = 8 * kGiB, .disk_bytes = 10 * kGiB}).ok());
  auto why = s->Explain(Request{.cpu_milli = 1});
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->cpu, 1);
  why = s->Explain(Request{.memory_bytes = 1});
  EXPECT_EQ(why->memory, 1);
  why = s->Explain(Request{.disk_bytes = 1});
  EXPECT_EQ(why->disk, 1);
}

TEST(Feasibility, NothingOnUnhealthyGpus) {
  auto s = Make({Node("n", 2)});
  ASSERT_TRUE(s->SetGpuHealth("n", 0, false).ok());
  auto p = s->Place(Gpu(1));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->gpus[0].index, 1);
  EXPECT_FALSE(s->Place(Gpu(1, 10)).ok());
  EXPECT_EQ(s->SetGpuHealth("n", 7, false).code(), absl::StatusCode::kNotFound);
}

TEST(Feasibility, NothingOnUnschedulableNodes) {
  auto s = Make({Node("n", 1)});
  ASSERT_TRUE(s->SetNodeSchedulable("n", false).ok());
  EXPECT_FALSE(s->Place(Request{.cpu_milli = 1}).ok());
  auto why = s->Explain(Gpu(1));
  EXPECT_EQ(why->unschedulable, 1);
  ASSERT_TRUE(s->SetNodeSchedulable("n", true).ok());
  EXPECT_TRUE(s->Place(Gpu(1)).ok());
}

TEST(Feasibility, ModelsAndLabels) {
  NodeSpec t4 = Node("t4", 1, "T4");
  t4.labels["zone"] = "a";
  auto s = Make({Node("a100", 1), t4});
  Request r = Gpu(1);
  r.gpu_models = {"T4"};
  auto p = s->Place(r);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->node, "t4");
  EXPECT_FALSE(s->Place(r).ok());
  r.gpu_models = {"H100-80GB"};
  EXPECT_EQ(s->Explain(r)->gpu_model, 2);
  Request sel = Gpu(0);
  sel.node_selector["zone"] = "b";
  EXPECT_FALSE(s->Place(sel).ok());
  EXPECT_EQ(s->Explain(sel)->selector, 2);
  sel.node_selector["zone"] = "a";
  auto q = s->Place(sel);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->node, "t4");
}

TEST(Feasibility, InvalidRequests) {
  auto s = Make({Node("n", 2)});
  EXPECT_EQ(s->Place(Gpu(2, 500)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->Place(Gpu(1, 0)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->Place(Gpu(1, 1001)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->Place(Request{.cpu_milli = -1}).status().code(), absl::StatusCode::kInvalidArgument);
  Request mig = Gpu(2);
  mig.mig_profile = "1g.5gb";
  EXPECT_EQ(s->Place(mig).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Scheduler::Create({.policy = "nope"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Nodes, AddRemoveAndRelease) {
  auto s = Make({Node("n", 1)});
  EXPECT_EQ(s->AddNode(Node("n", 1)).code(), absl::StatusCode::kAlreadyExists);
  NodeSpec dup = Node("d", 2);
  dup.gpus[1].index = 0;
  EXPECT_EQ(s->AddNode(dup).code(), absl::StatusCode::kInvalidArgument);
  auto p = s->Place(Gpu(1));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(s->Release(*p).ok());
  EXPECT_EQ(s->Release(*p).code(), absl::StatusCode::kFailedPrecondition);
  auto q = s->Place(Gpu(1));
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE(s->RemoveNode("n").ok());
  EXPECT_EQ(s->Release(*q).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(s->AddNode(Node("n", 1)).ok());
  EXPECT_EQ(s->Release(*q).code(), absl::StatusCode::kNotFound);  // a newer incarnation
  EXPECT_TRUE(s->Place(Gpu(1)).ok());
  EXPECT_EQ(s->RemoveNode("zz").code(), absl::StatusCode::kNotFound);
}

TEST(Batch, AllOrNothingAndAsManyAsFit) {
  auto s = Make({Node("a", 2), Node("b", 1)});
  auto none = s->PlaceBatch(Gpu(1), 4, BatchMode::kAllOrNothing);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s->GetNodeUsage("a")->gpu_free_milli, (std::vector<int32_t>{1000, 1000}));
  auto some = s->PlaceBatch(Gpu(1), 4, BatchMode::kAsManyAsFit);
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some->size(), 3u);
  for (const Placement& p : *some) {
    ASSERT_TRUE(s->Release(p).ok());
  }
  auto all = s->PlaceBatch(Gpu(1, 250), 12, BatchMode::kAllOrNothing);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 12u);
}

TEST(Policies, EveryNamedPolicyPlaces) {
  for (const std::string& name : PolicyNames()) {
    auto s = Make({Node("a", 8, "G2"), Node("b", 2, "T4")}, name);
    EXPECT_EQ(s->policy().Name(), name);
    for (int i = 0; i < 10; ++i) {
      EXPECT_TRUE(s->Place(Gpu(1, 300)).ok()) << name;
    }
    EXPECT_TRUE(s->Place(Gpu(0)).ok()) << name;
  }
}

TEST(Policies, BestFitPacksAndSpreadSpreads) {
  auto bf = Make({Node("a", 4), Node("b", 4)}, "best-fit");
  auto first = bf->Place(Gpu(1));
  auto second = bf->Place(Gpu(1));
  EXPECT_EQ(first->node, second->node);
  auto sp = Make({Node("a", 4), Node("b", 4)}, "spread");
  first = sp->Place(Gpu(1));
  second = sp->Place(Gpu(1));
  EXPECT_NE(first->node, second->node);
}

// Reserve restores placements made elsewhere (another replica, before a restart): exactly what
// fits, never beyond capacity, and releasable afterwards.
TEST(Reserve, TakesWhatFitsAndRefusesOverbooking) {
  auto s = Make({Node("n1", 2)});
  Placement half{.node = "n1", .gpus = {{.index = 0, .milli = 500}}, .cpu_milli = 1000};
  ASSERT_TRUE(s->Reserve(half).ok());
  auto second = s->Reserve(half);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(s->Reserve(half).status().code(), absl::StatusCode::kFailedPrecondition);
  Placement whole{.node = "n1", .gpus = {{.index = 1, .milli = 1000}}, .cpu_milli = 62000};
  ASSERT_TRUE(s->Reserve(whole).ok());
  EXPECT_EQ(s->Reserve(Placement{.node = "n1", .cpu_milli = 1}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->Reserve(Placement{.node = "nope"}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s->Reserve(Placement{.node = "n1", .gpus = {{.index = 7, .milli = 1}}}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(s->Release(*second).ok());
  EXPECT_EQ(s->GetNodeUsage("n1")->gpu_free_milli, (std::vector<int32_t>{500, 0}));
}

}  // namespace
}  // namespace gpuaas::sched
