#include "bench/stock/fill_outcome.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpuaas::stock::bench {

std::string FillDecision::ToString() const {
  if (!placed) return "(not placed)";
  return absl::StrCat(node, " [", absl::StrJoin(gpus, ","), "]");
}

void AllocationTally::Add(int64_t demand_milli, bool placed) {
  demand_ += demand_milli;
  if (placed) {
    allocated_ += demand_milli;
    ++placed_;
  } else {
    ++failed_;
  }
  if (std::isnan(unalloc_at_100_) && demand_ >= capacity_milli_) {
    unalloc_at_100_ =
        100.0 * (1.0 - static_cast<double>(allocated_) / static_cast<double>(capacity_milli_));
  }
}

absl::StatusOr<FillDecision> DecisionOf(const pb::CreateStocksResponse& resp) {
  FillDecision d;
  if (resp.stocks_size() == 0) return d;
  if (resp.stocks_size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(resp.stocks_size(), " stocks for one slot"));
  }
  const pb::Stock& s = resp.stocks(0);
  d.placed = true;
  d.node = s.node_id();
  for (const std::string& uuid : s.gpu_uuids()) {
    const int32_t index = PlannedGpuIndex(s.node_id(), uuid);
    if (index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("stock ", s.stock_id(), " holds GPU ", uuid, ", not one the plan made"));
    }
    d.gpus.push_back(index);
  }
  std::sort(d.gpus.begin(), d.gpus.end());
  return d;
}

absl::StatusOr<std::vector<FillDecision>> EngineFill(const OpenbPlan& plan,
                                                     const sched::SchedulerOptions& options) {
  absl::StatusOr<std::unique_ptr<sched::Scheduler>> scheduler = sched::Scheduler::Create(options);
  if (!scheduler.ok()) return scheduler.status();
  for (const sched::NodeSpec& n : plan.node_specs) {
    if (absl::Status s = (*scheduler)->AddNode(n); !s.ok()) return s;
  }
  std::vector<FillDecision> out;
  out.reserve(plan.arrivals.size());
  for (int32_t spec : plan.arrivals) {
    absl::StatusOr<sched::Placement> p = (*scheduler)->Place(plan.specs[spec].request);
    FillDecision& d = out.emplace_back();
    if (!p.ok()) continue;
    d.placed = true;
    d.node = p->node;
    for (const sched::GpuAssignment& g : p->gpus) d.gpus.push_back(g.index);
    std::sort(d.gpus.begin(), d.gpus.end());
  }
  return out;
}

AllocationTally Tally(const OpenbPlan& plan, const std::vector<FillDecision>& decisions) {
  AllocationTally tally(plan.capacity_milli);
  for (size_t i = 0; i < decisions.size() && i < plan.arrivals.size(); ++i) {
    tally.Add(plan.specs[plan.arrivals[i]].gpu_demand_milli, decisions[i].placed);
  }
  return tally;
}

std::string FirstDivergence(const OpenbPlan& plan, const std::vector<FillDecision>& service,
                            const std::vector<FillDecision>& engine) {
  const size_t n = std::min(service.size(), engine.size());
  for (size_t i = 0; i < n; ++i) {
    if (service[i] == engine[i]) continue;
    return absl::StrCat("arrival ", i, " (spec ", plan.specs[plan.arrivals[i]].spec.spec_name(),
                        "): service ", service[i].ToString(), ", engine ", engine[i].ToString());
  }
  if (service.size() != engine.size()) {
    return absl::StrCat("service made ", service.size(), " decisions, engine ", engine.size());
  }
  return "";
}

}  // namespace gpuaas::stock::bench
