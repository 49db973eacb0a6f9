// The agent's /metrics: each GPU's gauges under the names and labels NVIDIA's DCGM exporter uses,
// so existing Grafana dashboards work unchanged, plus the agent's own state.
//
//   DCGM_FI_DEV_GPU_UTIL      gauge, utilization in percent
//   DCGM_FI_DEV_FB_USED       gauge, frame buffer (memory) used in MiB
//   DCGM_FI_DEV_GPU_TEMP      gauge, temperature in °C
//   DCGM_FI_DEV_POWER_USAGE   gauge, power draw in W
//   DCGM_FI_DEV_XID_ERRORS    gauge, the last XID error (0 = none)
//     labels: gpu="0", UUID="GPU-...", device="nvidia0", modelName (NVML's name), Hostname
//   gpuaas_agent_gpu_healthy             gauge 1/0, same labels
//   gpuaas_agent_gpu_xid_errors_total    counter: XID errors since the agent started, same labels
//   gpuaas_agent_stock_connected         gauge 1/0: a heartbeat stream is open and answering
//   gpuaas_agent_registrations_total     counter: successful RegisterNode calls
//   gpuaas_agent_heartbeats_total        counter: heartbeats the stock service answered
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <string>
#include <vector>

#include "services/agent/gpu_monitor.h"
#include "services/agent/stock_reporter.h"

namespace gpuaas::agent {

class AgentMetrics final : public prometheus::Collectable {
 public:
  // `hostname` is the Hostname label (the node id, which names the node in gpuaas). `monitor`
  // and `stats` must outlive this object; `stats` may be null (no reporter).
  AgentMetrics(const GpuMonitor& monitor, const ReporterStats* stats, std::string hostname);

  // Reads the monitor's snapshot: thread-safe, never waits on the GPUs.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const GpuMonitor& monitor_;
  const ReporterStats* stats_;
  const std::string hostname_;
};

}  // namespace gpuaas::agent
