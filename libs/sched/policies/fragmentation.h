// FGD's fragmentation measure (Weng et al., USENIX ATC'23). For a target workload M of task
// shapes m with probabilities p_m and a node with per-GPU free shares R_g:
//   F_n(m) = sum of R_g over GPUs too small for m      when m fits the node (GPUs and CPU),
//          = sum of all R_g                            otherwise (m cannot use the node at all),
//   F_n(M) = sum over m of p_m * F_n(m).
// CPU-only shapes count the node's whole free GPU share, as the paper's artifact does; it
// shifts every node's delta equally, so it never changes a decision.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "libs/sched/internal/node_state.h"
#include "libs/sched/workload.h"

namespace gpuaas::sched {

struct FragGpu {
  int32_t free_milli = 0;
  int16_t model = 0;
};

class FragmentationMeasure final {
 public:
  // Resolves shape model names against `models`; call again when the registry grows.
  void Compile(const Workload& workload, const internal::ModelRegistry& models);
  int32_t compiled_models() const { return compiled_models_; }
  bool empty() const { return shapes_.empty(); }

  // F_n(M) of a node with `cpu_free` and these shareable GPUs (`node_model` is the node's
  // model id, or kMixedModel).
  double Measure(int64_t cpu_free, std::span<const FragGpu> gpus, int16_t node_model) const;

 private:
  static constexpr size_t kSortedGpus = 16;
  struct Shape {
    int64_t cpu_milli = 0;
    int32_t gpu_count = 0;
    int32_t gpu_milli = 0;
    bool any_model = true;
    std::vector<bool> allowed;
    double probability = 0;
    bool Allowed(int16_t m) const {
      return any_model || (m >= 0 && static_cast<size_t>(m) < allowed.size() && allowed[m]);
    }
  };
  std::vector<Shape> shapes_;
  int32_t compiled_models_ = 0;
};

}  // namespace gpuaas::sched
