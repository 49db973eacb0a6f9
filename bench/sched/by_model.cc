#include "bench/sched/by_model.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace gpuaas::sched::bench {

ByModelReport::ByModelReport(const std::vector<replay::TraceNode>& nodes) {
  for (const replay::TraceNode& n : nodes) {
    if (n.gpus > 0) {
      model_of_node_[n.name] = n.model;
      rows_[n.model].capacity += int64_t{n.gpus} * kWholeGpuMilli;
      capacity_ += int64_t{n.gpus} * kWholeGpuMilli;
    }
  }
}

void ByModelReport::StartSeed() {
  demand_ = 0;
  ++seeds_;
}

void ByModelReport::Add(const replay::TracePod& pod, const Placement* placement) {
  const int64_t want = pod.GpuDemandMilli();
  if (want == 0 || demand_ >= capacity_) {
    return;  // CPU-only, or past the 100 % point
  }
  demand_ += want;
  if (placement != nullptr) {
    Row& r = rows_[model_of_node_[placement->node]];
    r.used += want;
    r.flexible += pod.gpu_spec.empty() ? want : 0;
  }
  const int64_t failed = placement == nullptr ? want : 0;
  if (pod.gpu_spec.size() == 1) {
    Row& r = rows_[pod.gpu_spec[0]];
    r.pinned += want;
    r.pinned_failed += failed;
  } else if (pod.gpu_spec.size() > 1) {
    auto& [arrived, lost] = specs_[absl::StrJoin(pod.gpu_spec, "|")];
    arrived += want;
    lost += failed;
  }
}

std::string ByModelReport::Format() const {
  const double per = 1000.0 * (seeds_ > 0 ? seeds_ : 1);  // milli-GPU summed over seeds
  std::string out = absl::StrFormat("  %-26s %6s %9s %7s %12s %6s\n", "GPUs at 100 % demand", "all",
                                    "flexible", "pinned", "pinned fail", "free");
  for (const auto& [model, r] : rows_) {
    out += absl::StrFormat("  %-26s %6.0f %9.0f %7.0f %12.0f %6.0f\n", model, r.capacity / 1000.0,
                           r.flexible / per, r.pinned / per, r.pinned_failed / per,
                           r.capacity / 1000.0 - r.used / per);
  }
  for (const auto& [spec, counts] : specs_) {
    out += absl::StrFormat("  %-26s %6s %9s %7.0f %12.0f\n", spec, "", "", counts.first / per,
                           counts.second / per);
  }
  return out;
}

}  // namespace gpuaas::sched::bench
