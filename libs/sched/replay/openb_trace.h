// The openb GPU trace format (Alibaba cluster-trace-gpu-v2023, used by the FGD paper):
// parsing from CSV text (no file I/O here) and conversion to scheduler nodes and requests.
// Columns are found by header name, so extra or reordered columns are fine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libs/sched/types.h"

namespace gpuaas::sched::replay {

inline constexpr int64_t kMiB = int64_t{1} << 20;

struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
  std::string model;
};

struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;
  std::vector<std::string> gpu_spec;  // allowed models; empty = any
  int64_t GpuDemandMilli() const { return int64_t{num_gpu} * gpu_milli; }
};

// `sn,cpu_milli,memory_mib,gpu,model`. INVALID_ARGUMENT naming the line on bad input.
absl::StatusOr<std::vector<TraceNode>> ParseOpenbNodes(absl::string_view csv);
// `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,...`. INVALID_ARGUMENT likewise.
absl::StatusOr<std::vector<TracePod>> ParseOpenbPods(absl::string_view csv);

NodeSpec ToNodeSpec(const TraceNode& node);
Request ToRequest(const TracePod& pod);

// `count` nodes drawn (seeded, with replacement) from the 8-GPU nodes of `base`, renamed
// synthetic-NNNNN: a big cluster with openb's node mix, for speed runs.
std::vector<TraceNode> SyntheticCluster(const std::vector<TraceNode>& base, int32_t count,
                                        uint64_t seed);

// A pinned variant of a pod list: `share` of the GPU pods (exactly round(share x count), chosen
// seeded) get a gpu_spec of one model, replacing any spec they had. The trace does not say
// which node a pod ran on, so the model is drawn (seeded) from the models of the nodes that
// could host the pod on their own when empty (enough GPUs, CPU and memory), each weighted by
// its GPUs on those nodes: pinned demand follows capacity, as it would if users picked the
// models that are there. A pod no node can host, and CPU-only pods, stay as they are.
std::vector<TracePod> PinToOneModel(const std::vector<TracePod>& pods,
                                    const std::vector<TraceNode>& nodes, double share,
                                    uint64_t seed);

// Like PinToOneModel, but each chosen pod's gpu_spec is drawn from the specs named in
// `spec_source` (e.g. the paper's gpuspec20 list: half of its pinned pods name T4, which has
// 14 % of the GPUs), in proportion to how often they occur there, among the specs naming a
// model that could host the pod. Pinned demand then does not follow capacity: with a third
// of the GPU pods pinned this way, T4 is asked for more than it has.
std::vector<TracePod> PinLikeSpecs(const std::vector<TracePod>& pods,
                                   const std::vector<TraceNode>& nodes,
                                   const std::vector<TracePod>& spec_source, double share,
                                   uint64_t seed);

}  // namespace gpuaas::sched::replay
