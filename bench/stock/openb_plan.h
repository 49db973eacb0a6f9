// An openb cluster and request sequence in the stock service's terms: the trace's GPU nodes as
// simulated nodes to register, each distinct pod shape as a spec, and the pods in the replay's
// arrival order as one CreateStocks of one slot each. The same plan drives the service (through
// gRPC) and an in-process libs/sched Scheduler, so the two can be compared decision by decision.
//
// Where the plan departs from bench/sched's replay, because the stock API cannot say what the
// trace says:
//  - A spec names exactly one GPU model, openb's default pods name none. Every GPU pod is pinned
//    to one model, drawn (seeded) from the models of the nodes that could host it alone when
//    empty, weighted by their GPUs: the rule of replay::PinToOneModel on the sched-variants
//    branch with share 1 (this copy goes when that lands on main). A pod no node can host is
//    pinned to the model with the most GPUs, and fails everywhere.
//  - Specs need a GPU, so CPU-only pods are left out (they add no GPU demand, so the point at
//    which arrived demand reaches capacity is the same arrival).
//  - Specs and nodes need positive quantities: a pod's zero memory becomes one byte, and every
//    spec asks for `spec_disk_bytes` of disk on nodes with far more than they can ever hold.
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "libs/sched/replay/openb_trace.h"
#include "libs/sched/types.h"

namespace gpuaas::stock::bench {

namespace pb = ::gpuaas::stock::v1;

struct OpenbPlanOptions {
  int32_t node_stride = 1;     // every n-th GPU node of the trace, starting with the first
  uint64_t arrival_seed = 42;  // replay::BuildArrivals' seed (sched_replay --seeds)
  double demand_ratio = 1.0;   // the sequence ends at the pod whose demand reaches this
  uint64_t pin_seed = 1;       // the model draw
  std::string node_prefix;     // prepended to the trace's node names
  std::string spec_prefix = "ob";
  int64_t node_disk_bytes = int64_t{1} << 50;  // 1 PiB: never the binding constraint
  int64_t spec_disk_bytes = int64_t{1} << 30;
};

struct PlannedSpec {
  pb::Spec spec;           // for CreateSpec
  sched::Request request;  // the same ask for the in-process Scheduler, built from the pod
  int64_t gpu_demand_milli = 0;
};

struct OpenbPlan {
  std::vector<pb::Node> nodes;              // RegisterNode, in this order
  std::vector<sched::NodeSpec> node_specs;  // the same nodes for the Scheduler, same order
  std::vector<PlannedSpec> specs;
  std::vector<int32_t> arrivals;  // index into specs, one CreateStocks(number=1) each
  int64_t capacity_milli = 0;     // GPUs of `nodes` × 1000
  int64_t cpu_only_skipped = 0;   // CPU-only arrivals left out before the sequence's end
};

// INVALID_ARGUMENT when the trace has no GPU nodes, node_stride < 1, a node's model is not a
// canonical libs/sched model, or demand_ratio <= 0.
absl::StatusOr<OpenbPlan> MakeOpenbPlan(const std::vector<sched::replay::TraceNode>& nodes,
                                        const std::vector<sched::replay::TracePod>& pods,
                                        const OpenbPlanOptions& options);

// The model each pod is pinned to by the rule above, by pod index ("" for CPU-only pods), with
// `nodes` the cluster's nodes (GPU nodes only).
std::vector<std::string> PinnedModels(const std::vector<sched::replay::TracePod>& pods,
                                      const std::vector<sched::replay::TraceNode>& nodes,
                                      uint64_t seed);

// The UUID a planned node's GPU `index` registers with, and back (-1 when not one of ours).
std::string PlannedGpuUuid(const std::string& node_id, int32_t index);
int32_t PlannedGpuIndex(const std::string& node_id, const std::string& uuid);

}  // namespace gpuaas::stock::bench
