// Where the agent's GPUs come from: NVML on a GPU host (nvml_source.h) or a simulated inventory
// (simulated_source.h). GpuMonitor (gpu_monitor.h) polls a source and owns the health verdicts;
// a source only reports what the devices say.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuaas::agent {

// A GPU as discovered; fixed for the agent's lifetime.
struct GpuInfo {
  int index = 0;  // NVML's index, 0-based
  // Its device node is /dev/nvidia<minor>; NVML's index is not that number (it orders GPUs
  // by PCI bus, the driver numbers them as it probes).
  int minor = 0;
  std::string uuid;       // "GPU-8f6c..."
  std::string nvml_name;  // as NVML names it: "NVIDIA A100-SXM4-80GB"
  std::string model;      // canonical (libs/gpu/gpu_models.h), else nvml_name
  int64_t memory_mib = 0;
  bool mig_enabled = false;
};

// One reading of a GPU's gauges.
struct GpuReading {
  double utilization_percent = 0;
  int64_t memory_used_mib = 0;
  double temperature_celsius = 0;
  double power_watts = 0;
};

// An XID error a GPU raised.
struct XidEvent {
  int index = 0;
  int32_t xid = 0;
};

// Not thread-safe: GpuMonitor calls it from one thread.
class GpuSource {
 public:
  virtual ~GpuSource() = default;

  // The GPUs, in index order. Blocks on the driver. Errors: FAILED_PRECONDITION when the
  // driver cannot list them.
  virtual absl::StatusOr<std::vector<GpuInfo>> Discover() = 0;

  // The current gauges of GPU `index`. Blocks on the driver. Errors: UNAVAILABLE when the
  // device does not answer (lost, or in reset).
  virtual absl::StatusOr<GpuReading> Read(int index) = 0;

  // The XID errors raised since the last call, without waiting. Blocks only on the driver.
  virtual std::vector<XidEvent> TakeXids() = 0;

  // Whether GPU `index` is well enough to return to placement: it answers queries and nothing
  // says it is still broken. Blocks on the driver. Errors: UNAVAILABLE naming what failed.
  virtual absl::Status Probe(int index) = 0;
};

using GpuSourcePtr = std::unique_ptr<GpuSource>;

}  // namespace gpuaas::agent
