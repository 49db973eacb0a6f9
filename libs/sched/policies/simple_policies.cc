#include "libs/sched/policies/simple_policies.h"

#include <random>

#include "libs/sched/internal/feasibility.h"
#include "libs/sched/internal/ratio.h"

namespace gpuaas::sched {
namespace {

using internal::CompiledRequest;
using internal::GpuEligible;
using internal::NodeState;

using internal::Ratio;

// The eligible GPU with the most free share (ties: lowest position).
int32_t MostFreeShareGpu(const NodeState& node, const CompiledRequest& req) {
  int32_t best = -1;
  for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()); ++i) {
    if (GpuEligible(node.gpus[i], req) &&
        (best < 0 || node.gpus[i].free_milli > node.gpus[best].free_milli)) {
      best = i;
    }
  }
  return best;
}

// Leftover of the weighted resource vector (CPU and GPU, each normalised to the node) after
// the request, as the FGD artifact's best-fit scores it.
double Leftover(const NodeState& node, const CompiledRequest& req) {
  const double cpu = Ratio(node.cpu_free - req.request->cpu_milli, node.cpu_cap);
  const double gpu = Ratio(node.gpu_free_total - req.TotalGpuMilli(), node.gpu_cap_total);
  return cpu + gpu;
}

class RandomPolicy final : public Policy {
 public:
  explicit RandomPolicy(uint64_t seed) : rng_(seed) {}
  absl::string_view Name() const override { return "random"; }
  NodeScore Score(uint32_t, const NodeState& node, const CompiledRequest& req) override {
    NodeScore s{std::uniform_real_distribution<double>(0, 1)(rng_)};
    if (req.share) {
      // A random GPU among those that fit, so "random" is random inside the node too.
      int32_t seen = 0;
      for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()); ++i) {
        if (GpuEligible(node.gpus[i], req) &&
            std::uniform_int_distribution<int32_t>(0, seen++)(rng_) == 0) {
          s.share_gpu = i;
        }
      }
    }
    return s;
  }

 private:
  std::mt19937_64 rng_;
};

class FirstFitPolicy final : public Policy {
 public:
  absl::string_view Name() const override { return "first-fit"; }
  NodeScore Score(uint32_t slot, const NodeState&, const CompiledRequest&) override {
    return {static_cast<double>(slot)};
  }
};

class BestFitPolicy final : public Policy {
 public:
  absl::string_view Name() const override { return "best-fit"; }
  NodeScore Score(uint32_t, const NodeState& node, const CompiledRequest& req) override {
    return {Leftover(node, req)};
  }
};

class SpreadPolicy final : public Policy {
 public:
  absl::string_view Name() const override { return "spread"; }
  NodeScore Score(uint32_t, const NodeState& node, const CompiledRequest& req) override {
    return {-Leftover(node, req), req.share ? MostFreeShareGpu(node, req) : -1};
  }
};

// Tetris: prefer the node whose free vector is best aligned with the request.
class DotProductPolicy final : public Policy {
 public:
  absl::string_view Name() const override { return "dot-product"; }
  NodeScore Score(uint32_t, const NodeState& node, const CompiledRequest& req) override {
    const Request& r = *req.request;
    double dot = Ratio(r.cpu_milli, node.cpu_cap) * Ratio(node.cpu_free, node.cpu_cap) +
                 Ratio(r.memory_bytes, node.mem_cap) * Ratio(node.mem_free, node.mem_cap);
    if (node.gpu_cap_total > 0) {
      dot += Ratio(req.TotalGpuMilli(), node.gpu_cap_total) *
             Ratio(node.gpu_free_total, node.gpu_cap_total);
    }
    return {-dot};
  }
};

// Fill GPUs that are already in use before touching idle ones: a share goes to the fullest
// partly used GPU; otherwise the node with the fewest idle GPUs wins.
class GpuPackingPolicy final : public Policy {
 public:
  absl::string_view Name() const override { return "gpu-packing"; }
  NodeScore Score(uint32_t, const NodeState& node, const CompiledRequest& req) override {
    if (req.share) {
      int32_t best_partial = -1;
      for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()); ++i) {
        const auto& g = node.gpus[i];
        if (GpuEligible(g, req) && g.free_milli < 1000 &&
            (best_partial < 0 || g.free_milli < node.gpus[best_partial].free_milli)) {
          best_partial = i;
        }
      }
      if (best_partial >= 0) {
        return {node.gpus[best_partial].free_milli / 1000.0, best_partial};
      }
    }
    return {1.0 + node.whole_free + Ratio(node.cpu_free, node.cpu_cap)};
  }
};

}  // namespace

PolicyPtr MakeRandomPolicy(uint64_t seed) { return std::make_unique<RandomPolicy>(seed); }
PolicyPtr MakeFirstFitPolicy() { return std::make_unique<FirstFitPolicy>(); }
PolicyPtr MakeBestFitPolicy() { return std::make_unique<BestFitPolicy>(); }
PolicyPtr MakeSpreadPolicy() { return std::make_unique<SpreadPolicy>(); }
PolicyPtr MakeDotProductPolicy() { return std::make_unique<DotProductPolicy>(); }
PolicyPtr MakeGpuPackingPolicy() { return std::make_unique<GpuPackingPolicy>(); }

}  // namespace gpuaas::sched
