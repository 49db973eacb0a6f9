#include "libs/sched/replay/trace_replay.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "libs/common/status_macros.h"

namespace gpuaas::sched::replay {

std::vector<int32_t> BuildArrivals(const std::vector<TracePod>& pods, int64_t capacity_milli,
                                   double ratio, uint64_t seed) {
  std::vector<int32_t> out(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    out[i] = static_cast<int32_t>(i);
  }
  std::mt19937_64 rng(seed);
  std::shuffle(out.begin(), out.end(), rng);
  int64_t demand = 0;
  bool any_gpu = false;
  for (const TracePod& p : pods) {
    demand += p.GpuDemandMilli();
    any_gpu = any_gpu || p.GpuDemandMilli() > 0;
  }
  const auto target = static_cast<int64_t>(ratio * static_cast<double>(capacity_milli));
  std::uniform_int_distribution<size_t> pick(0, pods.empty() ? 0 : pods.size() - 1);
  while (any_gpu && demand < target) {
    const auto i = static_cast<int32_t>(pick(rng));
    out.push_back(i);
    demand += pods[i].GpuDemandMilli();
  }
  return out;
}

absl::StatusOr<std::unique_ptr<TraceReplay>> TraceReplay::Create(
    const std::vector<TraceNode>& nodes, const std::vector<TracePod>& pods,
    const ReplayOptions& options) {
  std::unique_ptr<TraceReplay> r(new TraceReplay());
  for (const TraceNode& n : nodes) {
    if (n.gpus > 0) {  // the paper's cluster: GPU nodes only
      r->nodes_.push_back(ToNodeSpec(n));
      r->capacity_milli_ += int64_t{n.gpus} * kWholeGpuMilli;
    }
  }
  if (r->capacity_milli_ == 0) {
    return absl::InvalidArgumentError("trace has no GPU nodes");
  }
  r->requests_.reserve(pods.size());
  for (const TracePod& p : pods) {
    r->requests_.push_back(ToRequest(p));
  }
  r->arrivals_ = BuildArrivals(pods, r->capacity_milli_, options.demand_ratio, options.seed);
  SchedulerOptions so;
  so.policy = options.policy;
  so.seed = options.seed;
  so.explain_failures = false;
  if (options.oracle_workload) {
    std::vector<Request> replayed;
    replayed.reserve(r->arrivals_.size());
    for (int32_t i : r->arrivals_) {
      replayed.push_back(r->requests_[i]);
    }
    so.workload = TypicalWorkload(replayed);
  }
  GPUAAS_ASSIGN_OR_RETURN(r->scheduler_, Scheduler::Create(std::move(so)));
  for (const NodeSpec& n : r->nodes_) {
    GPUAAS_RETURN_IF_ERROR(r->scheduler_->AddNode(n));
  }
  return r;
}

ReplayResult TraceReplay::Run(const std::function<void(const Decision&)>& on_decision,
                              const std::function<int64_t()>& clock_ns,
                              std::vector<int64_t>* latencies_ns) {
  ReplayResult result;
  result.capacity_milli = capacity_milli_;
  const double cap = static_cast<double>(capacity_milli_);
  int64_t demand = 0;
  int64_t allocated = 0;
  if (latencies_ns != nullptr) {
    latencies_ns->reserve(latencies_ns->size() + arrivals_.size());
  }
  for (size_t seq = 0; seq < arrivals_.size(); ++seq) {
    const Request& req = requests_[arrivals_[seq]];
    const int64_t start = clock_ns ? clock_ns() : 0;
    absl::StatusOr<Placement> p = scheduler_->Place(req);
    if (clock_ns && latencies_ns != nullptr) {
      latencies_ns->push_back(clock_ns() - start);
    }
    ++result.decisions;
    const int64_t want = req.gpu_count > 0 ? int64_t{req.gpu_count} * req.gpu_milli : 0;
    demand += want;
    if (p.ok()) {
      allocated += want;
    } else {
      ++result.failed;
    }
    if (on_decision) {
      on_decision(
          Decision{static_cast<int64_t>(seq), arrivals_[seq], &req, p.ok() ? &*p : nullptr});
    }
    if (std::isnan(result.unalloc_at_100) && static_cast<double>(demand) >= cap) {
      result.unalloc_at_100 = 100.0 * (1.0 - static_cast<double>(allocated) / cap);
    }
  }
  result.alloc_at_130 = 100.0 * static_cast<double>(allocated) / cap;
  return result;
}

}  // namespace gpuaas::sched::replay
