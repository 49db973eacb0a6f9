// Nodes bucketed by GPU model and free GPU capacity, so a decision visits only nodes that
// might fit: a 4-GPU request never looks at nodes with fewer than 4 whole free GPUs, a share of
// 700 milli never at nodes whose largest free share is below 700.
#pragma once

#include <cstdint>
#include <vector>

#include "libs/sched/internal/compiled_request.h"
#include "libs/sched/internal/node_state.h"

namespace gpuaas::sched::internal {

class NodeIndex final {
 public:
  // Puts `slot` into the bucket its current state belongs to (or out of the index when the
  // node is unschedulable or dead). Call after every change of the node.
  void Update(std::vector<NodeState>& nodes, uint32_t slot);
  void Erase(std::vector<NodeState>& nodes, uint32_t slot);

  // Calls f(slot) for every indexed node that may fit `req` (a superset of the feasible ones).
  template <class F>
  void ForEachCandidate(const CompiledRequest& req, F&& f) const {
    const bool gpu = req.gpu_count > 0 && !req.mig;
    for (int16_t model = 0; model < static_cast<int16_t>(buckets_.size()); ++model) {
      if (req.gpu_count > 0 || req.mig) {
        if (model == kNoGpuModel || (model != kMixedModel && !req.ModelAllowed(model))) {
          continue;
        }
      }
      const auto& by_bucket = buckets_[model];
      for (int32_t b = 0; b < static_cast<int32_t>(by_bucket.size()); ++b) {
        if (gpu && !BucketMayFit(b, req)) {
          continue;
        }
        for (uint32_t slot : by_bucket[b]) {
          f(slot);
        }
      }
    }
  }

 private:
  static constexpr int32_t kPartialBuckets = 10;  // by largest free share / 100
  static int32_t BucketOf(const NodeState& node);
  static bool BucketMayFit(int32_t bucket, const CompiledRequest& req) {
    if (bucket >= kPartialBuckets) {
      return bucket - kPartialBuckets >= req.gpu_count;
    }
    return req.share && bucket >= req.gpu_milli / 100;
  }

  std::vector<std::vector<std::vector<uint32_t>>> buckets_;  // [model][bucket] -> slots
};

}  // namespace gpuaas::sched::internal
