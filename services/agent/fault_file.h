// Fault injection for simulated GPUs (--fault-file): a text file of "<gpu> <xid>" lines, where
// <gpu> is a UUID or an index. While a line is there, that GPU keeps raising that XID; remove
// the line and the GPU recovers at its next re-probe. Blank lines and '#' comments are ignored.
//
//   # GPU 3 fell off the bus
//   3 79
//   GPU-1c6f2d4e-... 13
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "services/agent/gpu_source.h"

namespace gpuaas::agent {

struct ParsedFaults {
  std::vector<XidEvent> faults;
  // One message per line that is not "<gpu> <xid>" for one of `gpus`, with its line number.
  std::vector<std::string> errors;
};

// Parses the file's text against the node's GPUs. Pure; never fails (bad lines are reported).
ParsedFaults ParseFaults(std::string_view text, const std::vector<GpuInfo>& gpus);

// The utilization file (--utilization-file), the same shape: "<gpu> <percent>" lines pin a
// simulated GPU's utilization (0..100) while they are there, so idle auto-stop can be driven
// by hand; GPUs not listed wander as before.
struct ParsedUtilization {
  std::vector<std::pair<int, double>> pinned;  // GPU index, percent
  std::vector<std::string> errors;
};
ParsedUtilization ParseUtilization(std::string_view text, const std::vector<GpuInfo>& gpus);

}  // namespace gpuaas::agent
