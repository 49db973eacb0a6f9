// The inventory of a simulated GPU node, from --simulate-gpus ("8xA100-80GB", "2xA100-80GB,2xT4"):
// which GPUs it has, with stable UUIDs derived from the node id, NVML's names for them and the
// power range each model draws, so the simulated metrics look like a real node's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "services/agent/gpu_source.h"

namespace gpuaas::agent {

// The most GPUs one simulated node may have (real nodes have at most 16).
inline constexpr int kMaxSimulatedGpus = 64;

// What a simulated GPU of a model looks like to NVML.
struct SimulatedModel {
  std::string_view model;      // canonical: "A100-80GB"
  std::string_view nvml_name;  // "NVIDIA A100-SXM4-80GB"
  double idle_watts = 0;
  double max_watts = 0;  // the board's power limit
};

// The simulation's data for canonical model `model`, or nullptr when it has none (an unknown
// name, or the openb trace's anonymised G2/G3, which are no real GPU).
const SimulatedModel* FindSimulatedModel(std::string_view model);

// Parses --simulate-gpus: comma-separated "<count>x<model>" groups, count 1..64 in all, model
// canonical (libs/gpu/gpu_models.h), into the GPUs in index order, UUIDs derived from
// `node_id`. Errors: INVALID_ARGUMENT naming --simulate-gpus and the bad group.
absl::StatusOr<std::vector<GpuInfo>> ParseSimulatedGpus(std::string_view spec,
                                                        std::string_view node_id);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from a hash of node id and index: the same node
// keeps its GPUs' UUIDs across restarts, and two simulated nodes never share one.
std::string SimulatedGpuUuid(std::string_view node_id, int index);

}  // namespace gpuaas::agent
