#include "libs/sched/policies/fragmentation.h"

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
