// Fragmentation Gradient Descent: place each task where the node's fragmentation F_n(M) grows
// least (choosing the GPU inside the node the same way), M being a target workload that is
// either given or learned online from the requests seen so far.
//
// Variants (all share the incremental machinery):
//  - "fgd":       exact deltas, random tie-break among equal deltas.
//  - "fgd-paper": the artifact's scoring, int(100 * sigmoid(-delta / 1000 milli)), which lumps
//                 deltas within ~40 milli-GPU together, random tie-break among equal scores.
//  - "fgd-bf":    ours: exact deltas; equal deltas go to the node with the least leftover
//                 (best fit) instead of a random one.
// Per node and task shape the delta is cached under the node's version stamp, and identical
// node states share one computation, so a decision costs a lookup per untouched node.
#pragma once

#include <cstdint>
#include <optional>

#include "libs/sched/policy.h"

namespace gpuaas::sched {

struct FgdOptions {
  bool paper_quantization = false;
  bool random_ties = false;     // else the lowest node slot (insertion order) wins ties
  double bestfit_weight = 0;    // weight of the best-fit leftover added to delta (in GPUs)
  double quantum_milli = 0;     // > 0: deltas rounded down to multiples of this
  double untouched_penalty = 0; // added for a node without placements: fill used nodes first
  double cpu_pack = 0;          // CPU-only requests: weight of the node's free GPUs (in GPUs/8)
  bool exact_cpu_only = false;  // CPU-only requests: exact deltas even when quantising
  std::string name = "fgd";
};

PolicyPtr MakeFgdPolicy(const FgdOptions& fgd, const PolicyOptions& options);

}  // namespace gpuaas::sched
