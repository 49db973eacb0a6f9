// Replays an openb trace the way the FGD paper did: GPU nodes only; pods shuffled with the
// seed; random copies of trace pods appended until GPU demand reaches 130 % of capacity; one
// try per pod; no departures. Records the allocation ratio against arrived GPU demand.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libs/sched/replay/openb_trace.h"
#include "libs/sched/scheduler.h"

namespace gpuaas::sched::replay {

struct ReplayOptions {
  std::string policy = "fgd";
  uint64_t seed = 42;
  double demand_ratio = 1.3;
  // Give workload-aware policies the replayed trace's workload (the paper's setting); false =
  // they learn it online from the requests seen so far.
  bool oracle_workload = true;
};

struct Decision {
  int64_t seq = 0;
  int32_t pod = 0;  // index into the trace's pod list
  const Request* request = nullptr;
  const Placement* placement = nullptr;  // nullptr when the pod fit nowhere
};

struct ReplayResult {
  double unalloc_at_100 = std::numeric_limits<double>::quiet_NaN();  // % of GPU milli
  double alloc_at_130 = 0;                                           // % of GPU milli
  int64_t failed = 0;
  int64_t decisions = 0;
  int64_t capacity_milli = 0;
};

// Indices into `pods`: the shuffled list, then seeded copies until demand >= ratio x capacity.
std::vector<int32_t> BuildArrivals(const std::vector<TracePod>& pods, int64_t capacity_milli,
                                   double ratio, uint64_t seed);

class TraceReplay final {
 public:
  // INVALID_ARGUMENT for an unknown policy or a trace without GPU nodes.
  static absl::StatusOr<std::unique_ptr<TraceReplay>> Create(const std::vector<TraceNode>& nodes,
                                                             const std::vector<TracePod>& pods,
                                                             const ReplayOptions& options);

  // Places every arrival in order. `on_decision` (optional) sees each one; `clock_ns`
  // (optional) is read around each decision so per-decision latency reaches `latencies_ns`.
  ReplayResult Run(const std::function<void(const Decision&)>& on_decision = nullptr,
                   const std::function<int64_t()>& clock_ns = nullptr,
                   std::vector<int64_t>* latencies_ns = nullptr);

  const std::vector<NodeSpec>& nodes() const { return nodes_; }
  const Scheduler& scheduler() const { return *scheduler_; }

 private:
  TraceReplay() = default;

  std::vector<NodeSpec> nodes_;
  std::vector<Request> requests_;  // by trace pod index
  std::vector<int32_t> arrivals_;
  int64_t capacity_milli_ = 0;
  std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace gpuaas::sched::replay
