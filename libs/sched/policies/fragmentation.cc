#include "libs/sched/policies/fragmentation.h"

#include <algorithm>
#include <array>

namespace gpuaas::sched {

void FragmentationMeasure::Compile(const Workload& workload, const internal::ModelRegistry& models,
                                   double common_share) {
  shapes_.clear();
  compiled_models_ = models.size();
  common_share_ = common_share;
  double cpu = 0, memory = 0, gpu_milli = 0;
  for (const WorkloadShape& w : workload.shapes) {
    Shape s;
    s.cpu_milli = w.cpu_milli;
    s.gpu_count = w.gpu_count;
    s.gpu_milli = w.gpu_count > 0 ? w.gpu_milli : 0;
    s.probability = w.probability;
    s.memory_bytes = w.memory_bytes;
    cpu += s.probability * static_cast<double>(s.cpu_milli);
    memory += s.probability * static_cast<double>(s.memory_bytes);
    gpu_milli += s.probability * s.gpu_count * s.gpu_milli;
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
  cpu_per_milli_ = gpu_milli > 0 ? cpu / gpu_milli : 0;
  memory_per_milli_ = gpu_milli > 0 ? memory / gpu_milli : 0;
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

bool FragmentationMeasure::Usable(const FragGpu& gpu, int64_t cpu_free, int64_t memory_free) const {
  // Shapes come most common first, so the usual answer is found after a few.
  double share = 0;
  for (const Shape& s : shapes_) {
    if (s.gpu_count > 0 && s.gpu_milli <= gpu.free_milli && s.cpu_milli <= cpu_free &&
        s.memory_bytes <= memory_free && s.Allowed(gpu.model)) {
      share += s.probability;
      if (share > common_share_) {
        return true;
      }
    }
  }
  return false;
}

double FragmentationMeasure::Unusable(int64_t cpu_free, int64_t memory_free,
                                      std::span<const FragGpu> gpus) const {
  double unusable = 0;
  for (const FragGpu& g : gpus) {
    if (g.free_milli > 0 && !Usable(g, cpu_free, memory_free)) {
      unusable += g.free_milli;
    }
  }
  return unusable;
}

double FragmentationMeasure::Unbacked(int64_t cpu_free, int64_t memory_free,
                                      std::span<const FragGpu> gpus) const {
  double free_milli = 0;
  for (const FragGpu& g : gpus) {
    free_milli += g.free_milli;
  }
  double backed = free_milli;
  if (cpu_per_milli_ > 0) {
    backed = std::min(backed, static_cast<double>(cpu_free) / cpu_per_milli_);
  }
  if (memory_per_milli_ > 0) {
    backed = std::min(backed, static_cast<double>(memory_free) / memory_per_milli_);
  }
  return std::max(0.0, free_milli - backed);
}

}  // namespace gpuaas::sched
