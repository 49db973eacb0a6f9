#include "libs/sched/policies/fragmentation.h"

#include <algorithm>
#include <array>

namespace gpuaas::sched {

void FragmentationMeasure::Compile(const Workload& workload,
                                   const internal::ModelRegistry& models) {
  shapes_.clear();
  compiled_models_ = models.size();
  for (const WorkloadShape& w : workload.shapes) {
    Shape s;
    s.cpu_milli = w.cpu_milli;
    s.gpu_count = w.gpu_count;
    s.gpu_milli = w.gpu_count > 0 ? w.gpu_milli : 0;
    s.probability = w.probability;
    s.any_model = w.gpu_models.empty();
    if (!s.any_model) {
      s.allowed.assign(models.size(), false);
      for (const std::string& name : w.gpu_models) {
        const int16_t id = models.Find(name);
        if (id >= 0) {
          s.allowed[id] = true;
        }
      }
    }
    shapes_.push_back(std::move(s));
  }
}

double FragmentationMeasure::Measure(int64_t cpu_free, std::span<const FragGpu> gpus,
                                     int16_t node_model) const {
  int64_t total = 0;
  for (const FragGpu& g : gpus) {
    total += g.free_milli;
  }
  if (total == 0) {
    return 0;
  }
  const bool mixed = node_model == internal::kMixedModel;
  if (!mixed && gpus.size() <= kSortedGpus) {
    // One model: with the free shares sorted, "GPUs too small for m" is a prefix, so each
    // shape costs a short scan instead of a pass over every GPU.
    std::array<int32_t, kSortedGpus> sorted;
    std::array<int64_t, kSortedGpus + 1> prefix;
    const size_t n = gpus.size();
    for (size_t i = 0; i < n; ++i) {
      sorted[i] = gpus[i].free_milli;
    }
    std::sort(sorted.begin(), sorted.begin() + n);
    prefix[0] = 0;
    for (size_t i = 0; i < n; ++i) {
      prefix[i + 1] = prefix[i] + sorted[i];
    }
    double f = 0;
    for (const Shape& s : shapes_) {
      if (s.gpu_count == 0 || cpu_free < s.cpu_milli || !s.Allowed(node_model)) {
        f += s.probability * static_cast<double>(total);
        continue;
      }
      size_t small = 0;
      while (small < n && sorted[small] < s.gpu_milli) {
        ++small;
      }
      const bool fits = static_cast<int64_t>(n - small) >= s.gpu_count;
      f += s.probability * static_cast<double>(fits ? prefix[small] : total);
    }
    return f;
  }
  double f = 0;
  for (const Shape& s : shapes_) {
    if (s.gpu_count == 0 || cpu_free < s.cpu_milli || (!mixed && !s.Allowed(node_model))) {
      f += s.probability * static_cast<double>(total);
      continue;
    }
    int32_t fitting = 0;
    int64_t stranded = 0;
    for (const FragGpu& g : gpus) {
      if (g.free_milli >= s.gpu_milli && (!mixed || s.Allowed(g.model))) {
        ++fitting;
      } else {
        stranded += g.free_milli;
      }
    }
    f += s.probability * static_cast<double>(fitting >= s.gpu_count ? stranded : total);
  }
  return f;
}

}  // namespace gpuaas::sched
