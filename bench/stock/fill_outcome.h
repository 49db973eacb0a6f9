// What filling a cluster with an OpenbPlan's arrivals produced, the same way whether the stock
// service placed them (from its CreateStocks answers) or an in-process libs/sched Scheduler did,
// and the unallocated GPU share the replay reports.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/stock/openb_plan.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "libs/sched/scheduler.h"

namespace gpuaas::stock::bench {

// One arrival's outcome: the node and GPU indices it landed on, or nothing.
struct FillDecision {
  bool placed = false;
  std::string node;
  std::vector<int32_t> gpus;  // ascending
  friend bool operator==(const FillDecision&, const FillDecision&) = default;
  std::string ToString() const;  // "node-7 [0,1]" or "(not placed)"
};

// The unallocated GPU share as replay::TraceReplay measures it: arrived GPU demand counts every
// arrival, placed or not; the share is taken when arrived demand first reaches capacity.
class AllocationTally final {
 public:
  explicit AllocationTally(int64_t capacity_milli) : capacity_milli_(capacity_milli) {}
  void Add(int64_t demand_milli, bool placed);

  // Percent of capacity; NaN until arrived demand reached capacity.
  double unalloc_at_100() const { return unalloc_at_100_; }
  int64_t allocated_milli() const { return allocated_; }
  int64_t placed() const { return placed_; }
  int64_t failed() const { return failed_; }

 private:
  int64_t capacity_milli_;
  int64_t demand_ = 0, allocated_ = 0, placed_ = 0, failed_ = 0;
  double unalloc_at_100_ = std::numeric_limits<double>::quiet_NaN();
};

// A CreateStocks(number=1) answer of a planned node as a decision. INVALID_ARGUMENT when it
// holds more than one stock or a GPU UUID the plan did not register.
absl::StatusOr<FillDecision> DecisionOf(const pb::CreateStocksResponse& resp);

// Places the plan's arrivals with an in-process Scheduler made with `options`, as the stock
// service's ClusterView would: nodes added in plan order, one Place per arrival. INVALID_ARGUMENT
// for an unknown policy or a node the Scheduler refuses.
absl::StatusOr<std::vector<FillDecision>> EngineFill(const OpenbPlan& plan,
                                                     const sched::SchedulerOptions& options);

// The tally of `decisions` (one per arrival of `plan`, in order).
AllocationTally Tally(const OpenbPlan& plan, const std::vector<FillDecision>& decisions);

// "" when equal; else the first arrival where they differ, with both decisions and the spec.
std::string FirstDivergence(const OpenbPlan& plan, const std::vector<FillDecision>& service,
                            const std::vector<FillDecision>& engine);

}  // namespace gpuaas::stock::bench
