// A target workload: the task shapes a cluster expects, with their probabilities. FGD measures
// fragmentation against it. It can be given (e.g. from yesterday's requests) or learned online
// from the requests seen so far (OnlineWorkload).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "libs/sched/types.h"

namespace gpuaas::sched {

struct WorkloadShape {
  int64_t cpu_milli = 0;
  int32_t gpu_count = 0;
  int32_t gpu_milli = 0;                // per GPU; 0 without GPUs
  std::vector<std::string> gpu_models;  // allowed models; empty = any
  double probability = 0;
  // Mean memory of the requests of this shape. Not part of the shape's identity: FGD's measure
  // ignores memory; fgd-pack uses it to tell whether a node's memory can still host the shape.
  int64_t memory_bytes = 0;
  friend bool operator==(const WorkloadShape&, const WorkloadShape&) = default;
};

struct Workload {
  std::vector<WorkloadShape> shapes;
};

// Counts request shapes (CPU, GPU count, GPU share, allowed models; memory does not enter FGD's
// measure, so it is averaged per shape rather than splitting shapes) and reports the most common
// ones.
class ShapeCounter final {
 public:
  void Add(const Request& request);
  int64_t total() const { return total_; }
  // The most frequent shapes whose counts cover `coverage` of all requests (the FGD paper's
  // "typical pods", 95 %), each with probability count / total. Ties: smaller shape first.
  Workload Typical(double coverage = 0.95) const;

 private:
  struct Key {
    int64_t cpu_milli;
    int32_t gpu_count;
    int32_t gpu_milli;
    std::string models;  // '|'-joined
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.cpu_milli, k.gpu_count, k.gpu_milli, k.models);
    }
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct Tally {
    int64_t count = 0;
    int64_t memory_bytes = 0;  // sum over the counted requests
  };
  absl::flat_hash_map<Key, Tally> counts_;
  int64_t total_ = 0;
};

// The workload of a list of requests, as the FGD paper derives it from a trace.
Workload TypicalWorkload(const std::vector<Request>& requests, double coverage = 0.95);

}  // namespace gpuaas::sched
