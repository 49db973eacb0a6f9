// Free and total GPU share per GPU model, over the shareable GPUs of live schedulable nodes. The
// Cluster keeps it current on every node change, so a policy can ask how much of a model is left
// without scanning nodes (fgd-pack keeps flexible requests off models that pinned ones need).
#pragma once

#include <cstdint>
#include <vector>

#include "libs/sched/internal/node_state.h"

namespace gpuaas::sched::internal {

class ModelCapacity final {
 public:
  int64_t free_milli(int16_t model) const {
    return model >= 0 && static_cast<size_t>(model) < free_.size() ? free_[model] : 0;
  }
  int64_t cap_milli(int16_t model) const {
    return model >= 0 && static_cast<size_t>(model) < cap_.size() ? cap_[model] : 0;
  }
  int64_t total_free_milli() const { return total_free_; }
  int32_t models() const { return static_cast<int32_t>(free_.size()); }

  // Replaces what `node` contributed when last recounted with what it offers now.
  void Recount(NodeState& node);

 private:
  std::vector<int64_t> free_;  // by model id
  std::vector<int64_t> cap_;
  int64_t total_free_ = 0;
};

}  // namespace gpuaas::sched::internal
