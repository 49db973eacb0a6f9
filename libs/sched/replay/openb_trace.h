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

}  // namespace gpuaas::sched::replay
