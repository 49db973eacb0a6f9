// Fragmentation Gradient Descent: place each task where the node's fragmentation F_n(M) grows
// least (choosing the GPU inside the node the same way), M being a target workload that is
// either given or learned online from the requests seen so far.
//
// Variants (all share the incremental machinery; see bench/RESULTS.md for their figures):
//  - "fgd":       the paper artifact's scoring, int(100 * sigmoid(-delta / 1000 milli)), which
//                 lumps deltas within ~40 milli-GPU together; equal scores go to the first node
//                 in insertion order (trace order), which packs. Reproduces the paper's 4.77 %.
//  - "fgd-exact": exact deltas, insertion-order ties. Worse (it chases tiny deltas of rare
//                 shapes and spreads).
//  - "fgd-pack":  ours, see policy.cc. Adds two longer-sighted terms (fragmentation.h): GPU
//                 share that no common shape can ever use, and GPU share the node's CPU and
//                 memory cannot back; and model pressure, which keeps requests that may use any
//                 of several models off the models that model-pinned requests will need.
// Ties at the node level are broken by the Scheduler (RandomTies()).
// Per node and task shape the delta is cached under the node's version stamp, and identical
// node states share one computation, so a decision costs a lookup per untouched node.
#pragma once

#include <cstdint>
#include <optional>

#include "libs/sched/policy.h"

namespace gpuaas::sched {

struct FgdOptions {
  bool paper_quantization = false;
  bool random_ties = false;      // else the lowest node slot (insertion order) wins ties
  double bestfit_weight = 0;     // weight of the best-fit leftover added to delta (in GPUs)
  double quantum_milli = 0;      // > 0: deltas rounded down to multiples of this
  double untouched_penalty = 0;  // added for a node without placements: fill used nodes first
  double cpu_pack = 0;           // CPU-only requests: weight of the node's free GPUs (in GPUs/8)
  bool exact_cpu_only = false;   // CPU-only requests: exact deltas even when quantising
  double unbacked_weight = 0;    // weight of the Unbacked measure, added to F's delta
  double unusable_weight = 0;    // weight of the Unusable measure's delta, quantised on its own
  double common_share = 0.01;    // Unusable: the shapes that count make up more than this of M
  // Weight of model pressure, for requests that may use more than one GPU model: the share of
  // all GPU demand pinned to the node's model over that model's share of the free GPU capacity.
  double pressure_weight = 0;
  std::string name = "fgd";
};

PolicyPtr MakeFgdPolicy(const FgdOptions& fgd, const PolicyOptions& options);

}  // namespace gpuaas::sched
