// A Request resolved against one cluster's model ids, so the hot loop compares integers.
#pragma once

#include <cstdint>
#include <vector>

#include "libs/sched/internal/node_state.h"
#include "libs/sched/types.h"

namespace gpuaas::sched::internal {

struct CompiledRequest {
  const Request* request = nullptr;
  int32_t gpu_count = 0;
  int32_t gpu_milli = 0;  // per GPU; 0 without GPUs
  bool share = false;     // one GPU, less than a whole one
  bool mig = false;
  bool any_model = true;
  std::vector<bool> allowed;  // by model id, when !any_model

  bool ModelAllowed(int16_t model) const {
    return any_model ||
           (model >= 0 && static_cast<size_t>(model) < allowed.size() && allowed[model]);
  }
  int64_t TotalGpuMilli() const { return int64_t{gpu_count} * gpu_milli; }
};

}  // namespace gpuaas::sched::internal
