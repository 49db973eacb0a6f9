// The scheduler's mutable view of one node, kept flat for the hot loop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "libs/sched/mig.h"

namespace gpuaas::sched::internal {

// Model ids: 0 = node without GPUs, 1 = node with several models, 2.. = interned names.
inline constexpr int16_t kNoGpuModel = 0;
inline constexpr int16_t kMixedModel = 1;

class ModelRegistry final {
 public:
  ModelRegistry() : names_{"", "<mixed>"} {}
  int16_t Intern(absl::string_view name);
  // -1 when the name was never interned (no node has that model).
  int16_t Find(absl::string_view name) const;
  int32_t size() const { return static_cast<int32_t>(names_.size()); }

 private:
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, int16_t> ids_;
};

struct GpuState {
  int32_t index = 0;
  int16_t model = kNoGpuModel;
  bool healthy = true;
  bool mig = false;
  int32_t free_milli = 0;  // 0 for MIG GPUs: their capacity lives in mig_free
  uint8_t mig_free = 0;
  const MigGeometry* mig_geometry = nullptr;
  int64_t memory_bytes = 0;

  // Usable by whole-GPU and fractional requests.
  bool Shareable() const { return healthy && !mig; }
};

struct NodeState {
  bool live = false;
  std::string name;
  uint64_t incarnation = 0;
  uint64_t version = 0;  // globally unique stamp, renewed on every change (cache key)
  int64_t cpu_cap = 0, mem_cap = 0, disk_cap = 0;
  int64_t cpu_free = 0, mem_free = 0, disk_free = 0;
  bool schedulable = true;
  absl::flat_hash_map<std::string, std::string> labels;
  std::vector<GpuState> gpus;
  int16_t model_key = kNoGpuModel;
  int32_t placements = 0;

  // Derived from gpus by Refresh(), over shareable GPUs only.
  int32_t whole_free = 0;      // GPUs with all 1000 milli free
  int32_t max_partial = 0;     // largest free share among GPUs that are not whole-free
  int64_t gpu_free_total = 0;  // sum of free milli
  int64_t gpu_cap_total = 0;   // 1000 per shareable GPU

  // What ModelCapacity last counted for each GPU (by position), so it can replace it.
  struct Counted {
    int32_t free = 0;
    int32_t cap = 0;
  };
  std::vector<Counted> counted;

  // Position in NodeIndex.
  int32_t bucket = -1;
  uint32_t bucket_pos = 0;

  void Refresh();
};

}  // namespace gpuaas::sched::internal
