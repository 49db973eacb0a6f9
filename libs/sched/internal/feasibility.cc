#include "libs/sched/internal/feasibility.h"

#include <bit>

namespace gpuaas::sched::internal {
namespace {

bool SelectorMatches(const NodeState& node, const Request& request) {
  for (const auto& [key, value] : request.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) {
      return false;
    }
  }
  return true;
}

Reject CheckShareable(const NodeState& node, const CompiledRequest& req) {
  // Fast path for single-model nodes: the derived counters answer without a GPU scan.
  if (node.model_key != kMixedModel) {
    if (node.model_key == kNoGpuModel || !req.ModelAllowed(node.model_key) ||
        node.gpu_cap_total == 0) {
      return Reject::kGpuModel;
    }
    if (!req.share) {
      return node.whole_free >= req.gpu_count ? Reject::kNone : Reject::kGpuCount;
    }
    return node.whole_free > 0 || node.max_partial >= req.gpu_milli ? Reject::kNone
                                                                    : Reject::kGpuShare;
  }
  int32_t eligible = 0;
  int32_t fitting = 0;
  for (const GpuState& g : node.gpus) {
    if (!g.Shareable() || !req.ModelAllowed(g.model)) {
      continue;
    }
    ++eligible;
    if (g.free_milli >= req.gpu_milli) {
      ++fitting;
    }
  }
  if (eligible == 0) {
    return Reject::kGpuModel;
  }
  if (fitting >= req.gpu_count) {
    return Reject::kNone;
  }
  return req.share ? Reject::kGpuShare : Reject::kGpuCount;
}

Reject CheckMig(const NodeState& node, const CompiledRequest& req) {
  bool any = false;
  for (const GpuState& g : node.gpus) {
    if (!g.healthy || !g.mig || g.mig_geometry == nullptr || !req.ModelAllowed(g.model)) {
      continue;
    }
    const MigProfile* p = FindMigProfile(*g.mig_geometry, req.request->mig_profile);
    if (p == nullptr) {
      continue;
    }
    any = true;
    if (ChooseMigStart(*g.mig_geometry, *p, g.mig_free) >= 0) {
      return Reject::kNone;
    }
  }
  return any ? Reject::kMig : Reject::kGpuModel;
}

}  // namespace

bool GpuEligible(const GpuState& gpu, const CompiledRequest& req) {
  return gpu.Shareable() && req.ModelAllowed(gpu.model) && gpu.free_milli >= req.gpu_milli;
}

Reject CheckNode(const NodeState& node, const CompiledRequest& req) {
  const Request& r = *req.request;
  if (!node.schedulable) {
    return Reject::kUnschedulable;
  }
  if (!r.node_selector.empty() && !SelectorMatches(node, r)) {
    return Reject::kSelector;
  }
  if (req.mig) {
    const Reject model = CheckMig(node, req);
    if (model == Reject::kGpuModel) {
      return model;
    }
    if (node.cpu_free < r.cpu_milli) return Reject::kCpu;
    if (node.mem_free < r.memory_bytes) return Reject::kMemory;
    if (node.disk_free < r.disk_bytes) return Reject::kDisk;
    return model;
  }
  Reject gpu = Reject::kNone;
  if (req.gpu_count > 0) {
    gpu = CheckShareable(node, req);
    if (gpu == Reject::kGpuModel) {
      return gpu;
    }
  }
  if (node.cpu_free < r.cpu_milli) return Reject::kCpu;
  if (node.mem_free < r.memory_bytes) return Reject::kMemory;
  if (node.disk_free < r.disk_bytes) return Reject::kDisk;
  return gpu;
}

std::vector<int32_t> ChooseWholeGpus(const NodeState& node, const CompiledRequest& req) {
  std::vector<int32_t> out;
  out.reserve(req.gpu_count);
  for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()) &&
                      static_cast<int32_t>(out.size()) < req.gpu_count;
       ++i) {
    const GpuState& g = node.gpus[i];
    if (g.Shareable() && req.ModelAllowed(g.model) && g.free_milli == 1000) {
      out.push_back(i);
    }
  }
  return out;
}

int32_t ChooseBestFitShareGpu(const NodeState& node, const CompiledRequest& req) {
  int32_t best = -1;
  for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()); ++i) {
    const GpuState& g = node.gpus[i];
    if (GpuEligible(g, req) && (best < 0 || g.free_milli < node.gpus[best].free_milli)) {
      best = i;
    }
  }
  return best;
}

MigChoice ChooseMig(const NodeState& node, const CompiledRequest& req) {
  MigChoice best;
  int32_t best_free = 1 << 30;
  for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()); ++i) {
    const GpuState& g = node.gpus[i];
    if (!g.healthy || !g.mig || g.mig_geometry == nullptr || !req.ModelAllowed(g.model)) {
      continue;
    }
    const MigProfile* p = FindMigProfile(*g.mig_geometry, req.request->mig_profile);
    if (p == nullptr) {
      continue;
    }
    const int32_t start = ChooseMigStart(*g.mig_geometry, *p, g.mig_free);
    const int32_t free_slices = std::popcount(static_cast<unsigned>(g.mig_free));
    if (start >= 0 && free_slices < best_free) {
      best = {i, start, p->slices};
      best_free = free_slices;
    }
  }
  return best;
}

}  // namespace gpuaas::sched::internal
