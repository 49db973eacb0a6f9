// The stock service's messages built from what the agent knows: the Node it registers and the
// HeartbeatRequest it sends each interval. Pure functions, so the mapping is tested alone.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuaas/stock/v1/stock.pb.h"
#include "services/agent/gpu_monitor.h"
#include "services/agent/host_inventory.h"

namespace gpuaas::agent {

struct NodeIdentity {
  std::string node_id;
  std::string hostname;
  std::map<std::string, std::string> labels;
  std::string agent_version;
};

// The RegisterNodeRequest's node: identity, capacity as Kubernetes quantities, and every GPU
// with its inventory, health and last readings.
stock::v1::Node BuildNode(const NodeIdentity& id, const HostCapacity& capacity,
                          const std::vector<GpuStatus>& gpus);

// One heartbeat: the readings and health of every GPU.
stock::v1::HeartbeatRequest BuildHeartbeat(const std::string& node_id,
                                           const std::vector<GpuStatus>& gpus);

}  // namespace gpuaas::agent
