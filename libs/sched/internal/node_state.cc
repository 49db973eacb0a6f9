#include "libs/sched/internal/node_state.h"

#include <algorithm>

#include "libs/sched/types.h"

namespace gpuaas::sched::internal {

int16_t ModelRegistry::Intern(absl::string_view name) {
  if (name.empty()) {
    return kNoGpuModel;
  }
  auto it = ids_.find(name);
  if (it != ids_.end()) {
    return it->second;
  }
  const auto id = static_cast<int16_t>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(std::string(name), id);
  return id;
}

int16_t ModelRegistry::Find(absl::string_view name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? int16_t{-1} : it->second;
}

void NodeState::Refresh() {
  whole_free = 0;
  max_partial = 0;
  gpu_free_total = 0;
  gpu_cap_total = 0;
  for (const GpuState& g : gpus) {
    if (!g.Shareable()) {
      continue;
    }
    gpu_cap_total += kWholeGpuMilli;
    gpu_free_total += g.free_milli;
    if (g.free_milli == kWholeGpuMilli) {
      ++whole_free;
    } else {
      max_partial = std::max(max_partial, g.free_milli);
    }
  }
}

}  // namespace gpuaas::sched::internal
