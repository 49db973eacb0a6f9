#include "services/agent/node_messages.h"

#include "libs/common/quantity.h"

namespace gpuaas::agent {

stock::v1::Node BuildNode(const NodeIdentity& id, const HostCapacity& capacity,
                          const std::vector<GpuStatus>& gpus) {
  stock::v1::Node node;
  node.set_node_id(id.node_id);
  node.set_hostname(id.hostname);
  node.set_cpu(FormatCpuMillis(capacity.cpu_millis));
  node.set_memory(FormatBytes(capacity.memory_bytes));
  node.set_disk(FormatBytes(capacity.disk_bytes));
  node.mutable_labels()->insert(id.labels.begin(), id.labels.end());
  node.set_agent_version(id.agent_version);
  for (const GpuStatus& g : gpus) {
    stock::v1::Gpu& gpu = *node.add_gpus();
    gpu.set_uuid(g.info.uuid);
    gpu.set_model(g.info.model);
    gpu.set_memory_mib(g.info.memory_mib);
    gpu.set_mig_enabled(g.info.mig_enabled);
    gpu.set_healthy(g.healthy);
    gpu.set_last_xid(g.last_xid);
    gpu.set_utilization_percent(g.reading.utilization_percent);
    gpu.set_memory_used_mib(g.reading.memory_used_mib);
    gpu.set_temperature_celsius(g.reading.temperature_celsius);
    gpu.set_power_watts(g.reading.power_watts);
  }
  return node;
}

stock::v1::HeartbeatRequest BuildHeartbeat(const std::string& node_id,
                                           const std::vector<GpuStatus>& gpus) {
  stock::v1::HeartbeatRequest req;
  req.set_node_id(node_id);
  for (const GpuStatus& g : gpus) {
    stock::v1::GpuMetrics& m = *req.add_gpus();
    m.set_uuid(g.info.uuid);
    m.set_utilization_percent(g.reading.utilization_percent);
    m.set_memory_used_mib(g.reading.memory_used_mib);
    m.set_temperature_celsius(g.reading.temperature_celsius);
    m.set_power_watts(g.reading.power_watts);
    m.set_healthy(g.healthy);
    m.set_last_xid(g.last_xid);
  }
  return req;
}

}  // namespace gpuaas::agent
