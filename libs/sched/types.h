// The placement engine's data model: what a node offers and what a request asks for.
//
// Units: CPU in millicores, memory and disk in bytes, GPU shares in milli-GPU (1000 = a whole
// GPU). A request takes either nothing from GPUs, `gpu_count` whole GPUs, a fraction of one GPU
// (gpu_count == 1, gpu_milli < 1000, time-sliced), or one MIG instance (mig_profile set).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace gpuaas::sched {

inline constexpr int32_t kWholeGpuMilli = 1000;

struct GpuSpec {
  int32_t index = 0;  // device index on the node, unique per node
  std::string model;  // e.g. "A100-40GB", "T4", "G2"
  int64_t memory_bytes = 0;
  bool healthy = true;
  bool mig_enabled = false;  // a MIG GPU serves only MIG requests
};

struct NodeSpec {
  std::string name;  // unique within a Scheduler
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  int64_t disk_bytes = 0;
  absl::flat_hash_map<std::string, std::string> labels;
  bool schedulable = true;
  std::vector<GpuSpec> gpus;
};

struct Request {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  int64_t disk_bytes = 0;
  int32_t gpu_count = 0;                // 0 = no GPU
  int32_t gpu_milli = kWholeGpuMilli;   // per GPU; < 1000 only when gpu_count == 1
  std::string mig_profile;              // e.g. "3g.20gb"; needs gpu_count == 1
  std::vector<std::string> gpu_models;  // allowed models; empty = any
  absl::flat_hash_map<std::string, std::string> node_selector;  // all must match node labels
};

// One GPU taken by a placement: `milli` of GPU `index` (1000 for a whole GPU).
struct GpuAssignment {
  int32_t index = 0;
  int32_t milli = 0;
  friend bool operator==(const GpuAssignment&, const GpuAssignment&) = default;
};

// One MIG instance: memory slices [start_slice, start_slice + slices) of GPU `gpu_index`.
struct MigAssignment {
  int32_t gpu_index = 0;
  std::string profile;
  int32_t start_slice = 0;
  int32_t slices = 0;
  friend bool operator==(const MigAssignment&, const MigAssignment&) = default;
};

// Everything one request holds on one node; Release() gives exactly this back.
struct Placement {
  std::string node;
  std::vector<GpuAssignment> gpus;
  std::optional<MigAssignment> mig;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  int64_t disk_bytes = 0;
  // Identifies the node incarnation, so a placement outliving RemoveNode() cannot be
  // released onto a newer node of the same name.
  uint64_t node_incarnation = 0;
};

// A node's free capacity as seen by callers (for dashboards and tests).
struct NodeUsage {
  std::string name;
  int64_t cpu_free_milli = 0;
  int64_t memory_free_bytes = 0;
  int64_t disk_free_bytes = 0;
  bool schedulable = true;
  std::vector<int32_t> gpu_free_milli;     // by position in NodeSpec::gpus
  std::vector<uint8_t> gpu_mig_free_mask;  // bit i set = MIG memory slice i free
};

}  // namespace gpuaas::sched
