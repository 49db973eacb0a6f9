// Whether a request fits a node, and which GPUs it would take. The single source of truth for
// the rules users rely on: whole GPUs only on untouched GPUs, shares only where they fit,
// multi-GPU requests only on whole GPUs of one node, MIG by NVIDIA's placement tables, never
// beyond CPU, memory or disk, nothing on unhealthy GPUs or unschedulable nodes.
#pragma once

#include <cstdint>
#include <vector>

#include "libs/sched/internal/compiled_request.h"
#include "libs/sched/internal/node_state.h"

namespace gpuaas::sched::internal {

// The first constraint (in this order) that rules a node out.
enum class Reject : int8_t {
  kNone = 0,
  kUnschedulable,
  kSelector,
  kGpuModel,  // no healthy GPU of an allowed model (or of the MIG kind asked for)
  kCpu,
  kMemory,
  kDisk,
  kGpuCount,  // not enough whole free GPUs
  kGpuShare,  // no GPU with enough free share
  kMig,       // no legal MIG start free
};
inline constexpr int kRejectKinds = 10;

Reject CheckNode(const NodeState& node, const CompiledRequest& req);

// Shareable GPU positions (into node.gpus) of an allowed model with at least `milli` free.
bool GpuEligible(const GpuState& gpu, const CompiledRequest& req);

// Positions of the `gpu_count` lowest-index whole free eligible GPUs. Precondition: fits.
std::vector<int32_t> ChooseWholeGpus(const NodeState& node, const CompiledRequest& req);

// The eligible GPU with the least free share that still fits (ties: lowest position), or -1.
int32_t ChooseBestFitShareGpu(const NodeState& node, const CompiledRequest& req);

// The MIG GPU position and start slice for the request, or {-1, -1}. Prefers the GPU with the
// fewest free slices that fits, so whole MIG GPUs stay free for big profiles.
struct MigChoice {
  int32_t gpu = -1;
  int32_t start = -1;
  int32_t slices = 0;
};
MigChoice ChooseMig(const NodeState& node, const CompiledRequest& req);

}  // namespace gpuaas::sched::internal
