// The host's CPU, memory and disk as the agent registers them: measured from /proc and
// statvfs on a real node; on a simulated one (several agents on one small machine) invented
// per GPU, since the machine's own numbers would be shared and meaningless. Either way the
// --cpu, --memory and --disk flags override.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas::agent {

struct HostCapacity {
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  int64_t disk_bytes = 0;
};

// What a simulated node has per GPU (--help says so too).
inline constexpr int64_t kSimulatedCpuPerGpu = 16;                     // cores
inline constexpr int64_t kSimulatedMemoryPerGpu = int64_t{128} << 30;  // 128Gi
inline constexpr int64_t kSimulatedDiskPerGpu = int64_t{1} << 40;      // 1Ti

// The "processor : N" entries of /proc/cpuinfo. Pure.
int CountCpuinfoProcessors(std::string_view cpuinfo);

// MemTotal of /proc/meminfo, in bytes. Error: INVALID_ARGUMENT when it is missing or garbled.
absl::StatusOr<int64_t> ParseMemTotal(std::string_view meminfo);

// Measures this host: the CPUs this process may run on (sched_getaffinity, else /proc/cpuinfo),
// MemTotal, and the size of the file system holding `disk_path`. Blocks on /proc and statvfs.
// Errors: FAILED_PRECONDITION naming what could not be read.
absl::StatusOr<HostCapacity> MeasureHost(const std::string& disk_path);

// The invented capacity of a simulated node with `gpu_count` GPUs (at least one GPU's worth).
HostCapacity SimulatedCapacity(int gpu_count);

// Kubernetes quantities from --cpu, --memory, --disk; empty = keep the measured value.
struct CapacityOverrides {
  std::string cpu;
  std::string memory;
  std::string disk;
};

// `base` with the overrides applied. Error: INVALID_ARGUMENT naming the flag.
absl::StatusOr<HostCapacity> ApplyOverrides(HostCapacity base, const CapacityOverrides& overrides);

}  // namespace gpuaas::agent
