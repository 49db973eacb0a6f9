#include "libs/sched/internal/model_capacity.h"

#include "libs/sched/types.h"

namespace gpuaas::sched::internal {

void ModelCapacity::Recount(NodeState& node) {
  const bool usable = node.live && node.schedulable;
  node.counted.resize(node.gpus.size());
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const GpuState& g = node.gpus[i];
    NodeState::Counted now;
    if (usable && g.Shareable()) {
      now = {g.free_milli, kWholeGpuMilli};
    }
    NodeState::Counted& was = node.counted[i];
    if (now.free != was.free || now.cap != was.cap) {
      const auto m = static_cast<size_t>(g.model);
      if (free_.size() <= m) {
        free_.resize(m + 1, 0);
        cap_.resize(m + 1, 0);
      }
      free_[m] += now.free - was.free;
      cap_[m] += now.cap - was.cap;
      total_free_ += now.free - was.free;
      was = now;
    }
  }
}

}  // namespace gpuaas::sched::internal
