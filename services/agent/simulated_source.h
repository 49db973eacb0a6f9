// A GpuSource without GPUs, for development stacks and tests: the inventory from
// --simulate-gpus (simulated_inventory.h), gauges that wander plausibly within each model's
// range (or pinned by a utilization file), and XID errors injected through a fault file
// (fault_file.h).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "services/agent/gpu_source.h"
#include "services/agent/simulated_inventory.h"

namespace gpuaas::agent {

class SimulatedGpuSource final : public GpuSource {
 public:
  // `gpus` from ParseSimulatedGpus. `fault_file` may be empty (no faults) or name a file that
  // need not exist yet; it is read on every TakeXids and Probe. The gauges' random walk is
  // seeded from each GPU's UUID, so a node's readings repeat from one run to the next.
  SimulatedGpuSource(std::vector<GpuInfo> gpus, std::string fault_file,
                     std::string utilization_file = "");

  absl::StatusOr<std::vector<GpuInfo>> Discover() override;
  absl::StatusOr<GpuReading> Read(int index) override;
  // One event per fault line, every call, for as long as the line is there.
  std::vector<XidEvent> TakeXids() override;
  // UNAVAILABLE while the fault file lists an XID for the GPU that makes it unhealthy.
  absl::Status Probe(int index) override;

 private:
  struct Walk {
    std::mt19937_64 rng;
    double utilization = 0;   // percent
    double memory_share = 0;  // of the GPU's memory, 0..1
    double temperature = 0;   // follows utilization with lag
  };

  std::vector<XidEvent> ReadFaults();

  std::vector<GpuInfo> gpus_;
  std::vector<const SimulatedModel*> models_;
  std::vector<Walk> walks_;
  std::string fault_file_;
  std::string utilization_file_;   // may be empty; read on every Read
  std::string last_fault_errors_;  // logged once per change
};

}  // namespace gpuaas::agent
