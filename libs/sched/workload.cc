#include "libs/sched/workload.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gpuaas::sched {

void ShapeCounter::Add(const Request& request) {
  const int32_t milli = request.gpu_count > 0 ? request.gpu_milli : 0;
  Tally& t = counts_[Key{request.cpu_milli, request.gpu_count, milli,
                         absl::StrJoin(request.gpu_models, "|")}];
  ++t.count;
  t.memory_bytes += request.memory_bytes;
  ++total_;
}

Workload ShapeCounter::Typical(double coverage) const {
  std::vector<std::pair<const Key*, Tally>> sorted;
  sorted.reserve(counts_.size());
  for (const auto& [key, tally] : counts_) {
    sorted.emplace_back(&key, tally);
  }
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second.count != b.second.count) {
      return a.second.count > b.second.count;
    }
    return std::tie(a.first->gpu_count, a.first->gpu_milli, a.first->cpu_milli, a.first->models) <
           std::tie(b.first->gpu_count, b.first->gpu_milli, b.first->cpu_milli, b.first->models);
  });
  Workload out;
  int64_t covered = 0;
  for (const auto& [key, tally] : sorted) {
    const int64_t count = tally.count;
    if (total_ > 0 && static_cast<double>(covered) >= coverage * static_cast<double>(total_)) {
      break;
    }
    WorkloadShape shape;
    shape.cpu_milli = key->cpu_milli;
    shape.gpu_count = key->gpu_count;
    shape.gpu_milli = key->gpu_milli;
    if (!key->models.empty()) {
      shape.gpu_models = absl::StrSplit(key->models, '|');
    }
    shape.probability = static_cast<double>(count) / static_cast<double>(total_);
    shape.memory_bytes = tally.memory_bytes / count;
    out.shapes.push_back(std::move(shape));
    covered += count;
  }
  return out;
}

Workload TypicalWorkload(const std::vector<Request>& requests, double coverage) {
  ShapeCounter counter;
  for (const Request& r : requests) {
    counter.Add(r);
  }
  return counter.Typical(coverage);
}

}  // namespace gpuaas::sched
