// The GPU models gpuaas knows: the names specs, nodes and the placement engine use for them, how
// much memory each has, and how the names NVML reports ("NVIDIA A100-SXM4-80GB", "Tesla T4") map
// onto them. A spec may only name a model from this table, and an agent reports its GPUs under
// these names, so "A100-80GB" means the same GPU everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gpuaas::gpu {

struct GpuModel {
  std::string_view name;  // canonical: "A100-80GB", "T4"
  int32_t memory_gib = 0;
  bool mig = false;  // offers MIG partitions (libs/sched/mig.h has the geometry)
};

// Every known model, in a fixed order.
std::span<const GpuModel> KnownGpuModels();

// The model named exactly `name` (canonical, case-sensitive), or nullptr.
const GpuModel* FindGpuModel(std::string_view name);

// The canonical name of a GPU as NVML names it ("NVIDIA A100-SXM4-80GB" -> "A100-80GB",
// "Tesla V100-SXM2-32GB" -> "V100M32", "NVIDIA H100 80GB HBM3" -> "H100-80GB"); a canonical name
// maps to itself. nullopt for GPUs outside the table, which an agent then reports as they are
// named and no spec can ask for.
std::optional<std::string_view> CanonicalGpuModel(std::string_view nvml_name);

}  // namespace gpuaas::gpu
