// FGD's fragmentation measure (Weng et al., USENIX ATC'23). For a target workload M of task
// shapes m with probabilities p_m and a node with per-GPU free shares R_g:
//   F_n(m) = sum of R_g over GPUs too small for m      when m fits the node (GPUs and CPU),
//          = sum of all R_g                            otherwise (m cannot use the node at all),
//   F_n(M) = sum over m of p_m * F_n(m).
// CPU-only shapes count the node's whole free GPU share, as the paper's artifact does; it
// shifts every node's delta equally, so it never changes a decision.
//
// F_n(M) only asks whether the *next* task could use a GPU. Two longer-sighted measures, used by
// fgd-pack, ask whether *any* later task will:
//   Unusable: free share on GPUs that no common shape (those making up more than
//             `common_share` of M together) can use: the share is too small for all of them, or
//             the node's CPU or memory is too short. Nothing will ever fill it.
//   Unbacked: free GPU share the node's free CPU and memory cannot back at the workload's
//             average CPU and memory per milli-GPU (CPU-only tasks included, as they compete
//             for the same CPU). It catches a node drifting towards stranded GPUs long before
//             its CPU is actually gone.
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
  // `common_share`: see Unusable above.
  void Compile(const Workload& workload, const internal::ModelRegistry& models,
               double common_share = 0);
  int32_t compiled_models() const { return compiled_models_; }
  bool empty() const { return shapes_.empty(); }

  // F_n(M) of a node with `cpu_free` and these shareable GPUs (`node_model` is the node's
  // model id, or kMixedModel).
  double Measure(int64_t cpu_free, std::span<const FragGpu> gpus, int16_t node_model) const;
  // The longer-sighted measures above, in milli-GPU.
  double Unusable(int64_t cpu_free, int64_t memory_free, std::span<const FragGpu> gpus) const;
  double Unbacked(int64_t cpu_free, int64_t memory_free, std::span<const FragGpu> gpus) const;

 private:
  static constexpr size_t kSortedGpus = 16;
  struct Shape {
    int64_t cpu_milli = 0;
    int32_t gpu_count = 0;
    int32_t gpu_milli = 0;
    int64_t memory_bytes = 0;
    bool any_model = true;
    std::vector<bool> allowed;
    double probability = 0;
    bool Allowed(int16_t m) const {
      return any_model || (m >= 0 && static_cast<size_t>(m) < allowed.size() && allowed[m]);
    }
  };
  // Whether common GPU shapes (more than common_share_ of M) fit this GPU's free share, model,
  // and the node's free CPU and memory.
  bool Usable(const FragGpu& gpu, int64_t cpu_free, int64_t memory_free) const;

  std::vector<Shape> shapes_;
  int32_t compiled_models_ = 0;
  double common_share_ = 0;
  double cpu_per_milli_ = 0;     // workload CPU (millicores) per milli-GPU demanded
  double memory_per_milli_ = 0;  // workload memory (bytes) per milli-GPU demanded
};

}  // namespace gpuaas::sched
