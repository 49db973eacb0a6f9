// Random clusters and request sequences: thousands of place/release steps per seed. After
// every step no GPU share exceeds 1000, no node exceeds its CPU, memory or disk, and
// releasing everything restores the initial state exactly.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "libs/sched/scheduler.h"

namespace gpuaas::sched {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const char* const kModels[] = {"T4", "A100-40GB", "H100-80GB", "A30", "G2"};

std::vector<NodeSpec> RandomCluster(std::mt19937_64& rng) {
  std::vector<NodeSpec> nodes;
  const int count = std::uniform_int_distribution<int>(5, 30)(rng);
  for (int i = 0; i < count; ++i) {
    NodeSpec n;
    n.name = absl::StrCat("node-", i);
    n.cpu_milli = std::uniform_int_distribution<int64_t>(4, 128)(rng) * 1000;
    n.memory_bytes = std::uniform_int_distribution<int64_t>(8, 512)(rng) * kGiB;
    n.disk_bytes = std::uniform_int_distribution<int64_t>(0, 2000)(rng) * kGiB;
    n.labels["zone"] = (i % 2 == 0) ? "a" : "b";
    const std::string model = kModels[rng() % 5];
    const int gpus = std::vector<int>{0, 1, 2, 4, 8}[rng() % 5];
    const bool mig = model != "T4" && model != "G2" && rng() % 3 == 0;
    for (int g = 0; g < gpus; ++g) {
      n.gpus.push_back(GpuSpec{.index = g,
                               .model = model,
                               .healthy = rng() % 10 != 0,
                               .mig_enabled = mig && g % 2 == 0});
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

Request RandomRequest(std::mt19937_64& rng) {
  Request r;
  r.cpu_milli = std::uniform_int_distribution<int64_t>(0, 32)(rng) * 500;
  r.memory_bytes = std::uniform_int_distribution<int64_t>(0, 64)(rng) * kGiB;
  r.disk_bytes = std::uniform_int_distribution<int64_t>(0, 200)(rng) * kGiB;
  switch (rng() % 6) {
    case 0:
      break;  // CPU only
    case 1:
      r.gpu_count = 1;
      r.gpu_milli = std::vector<int32_t>{1, 250, 500, 999}[rng() % 4];
      break;
    case 2:
      r.gpu_count = 1;
      r.gpu_milli = std::uniform_int_distribution<int32_t>(1, 1000)(rng);
      break;
    case 3:
      r.gpu_count = std::vector<int32_t>{1, 2, 4, 8}[rng() % 4];
      break;
    case 4: {
      r.gpu_count = 1;
      r.mig_profile = std::vector<std::string>{"1g.5gb",  "3g.20gb", "1g.10gb",
                                               "7g.80gb", "1g.6gb",  "2g.12gb"}[rng() % 6];
      break;
    }
    default:
      r.gpu_count = 1;
      r.gpu_milli = 500;
      r.gpu_models = {kModels[rng() % 5]};
      if (rng() % 2 == 0) r.node_selector["zone"] = "a";
  }
  return r;
}

std::vector<NodeUsage> Usage(const Scheduler& s, const std::vector<NodeSpec>& nodes) {
  std::vector<NodeUsage> out;
  for (const NodeSpec& n : nodes) {
    out.push_back(*s.GetNodeUsage(n.name));
  }
  return out;
}

void CheckBounds(const Scheduler& s, const std::vector<NodeSpec>& nodes) {
  for (const NodeSpec& n : nodes) {
    const NodeUsage u = *s.GetNodeUsage(n.name);
    ASSERT_GE(u.cpu_free_milli, 0) << n.name;
    ASSERT_LE(u.cpu_free_milli, n.cpu_milli) << n.name;
    ASSERT_GE(u.memory_free_bytes, 0) << n.name;
    ASSERT_LE(u.memory_free_bytes, n.memory_bytes) << n.name;
    ASSERT_GE(u.disk_free_bytes, 0) << n.name;
    ASSERT_LE(u.disk_free_bytes, n.disk_bytes) << n.name;
    for (int32_t f : u.gpu_free_milli) {
      ASSERT_GE(f, 0) << n.name;  // used share = 1000 - free never exceeds 1000
      ASSERT_LE(f, 1000) << n.name;
    }
  }
}

bool operator==(const NodeUsage& a, const NodeUsage& b) {
  return a.name == b.name && a.cpu_free_milli == b.cpu_free_milli &&
         a.memory_free_bytes == b.memory_free_bytes && a.disk_free_bytes == b.disk_free_bytes &&
         a.gpu_free_milli == b.gpu_free_milli && a.gpu_mig_free_mask == b.gpu_mig_free_mask;
}

class PropertyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PropertyTest, PlaceReleaseKeepsInvariants) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed * 7919);
    const std::vector<NodeSpec> nodes = RandomCluster(rng);
    auto created = Scheduler::Create({.policy = GetParam(), .seed = seed});
    ASSERT_TRUE(created.ok());
    Scheduler& s = **created;
    for (const NodeSpec& n : nodes) {
      ASSERT_TRUE(s.AddNode(n).ok());
    }
    const std::vector<NodeUsage> initial = Usage(s, nodes);
    std::vector<Placement> held;
    for (int step = 0; step < 2500; ++step) {
      const int action = static_cast<int>(rng() % 10);
      if (action < 6 || held.empty()) {
        const Request r = RandomRequest(rng);
        auto p = s.Place(r);
        if (p.ok()) {
          // The placement matches what was asked.
          if (!r.mig_profile.empty()) {
            ASSERT_TRUE(p->mig.has_value());
          } else {
            ASSERT_EQ(static_cast<int32_t>(p->gpus.size()), r.gpu_count);
          }
          held.push_back(*std::move(p));
        } else {
          ASSERT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted) << p.status();
        }
      } else if (action < 9) {
        const size_t i = rng() % held.size();
        ASSERT_TRUE(s.Release(held[i]).ok());
        held[i] = held.back();
        held.pop_back();
      } else {
        const NodeSpec& n = nodes[rng() % nodes.size()];
        if (rng() % 2 == 0 && !n.gpus.empty()) {
          // Health flips change what new requests may use, never what is held.
          ASSERT_TRUE(
              s.SetGpuHealth(n.name, n.gpus[rng() % n.gpus.size()].index, rng() % 2 == 0).ok());
        } else {
          ASSERT_TRUE(s.SetNodeSchedulable(n.name, rng() % 4 != 0).ok());
        }
      }
      CheckBounds(s, nodes);
      if (HasFatalFailure()) return;
    }
    for (const Placement& p : held) {
      ASSERT_TRUE(s.Release(p).ok());
    }
    const std::vector<NodeUsage> after = Usage(s, nodes);
    for (size_t i = 0; i < nodes.size(); ++i) {
      EXPECT_TRUE(after[i] == initial[i]) << nodes[i].name << " seed " << seed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PropertyTest, ::testing::ValuesIn(PolicyNames()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace gpuaas::sched
