#include "services/agent/agent_metrics.h"

#include <functional>

#include "absl/strings/str_cat.h"

namespace gpuaas::agent {
namespace {

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type) {
  return prometheus::MetricFamily{std::move(name), std::move(help), type, {}};
}

prometheus::ClientMetric Sample(std::vector<prometheus::ClientMetric::Label> labels,
                                prometheus::MetricType type, double value) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return m;
}

}  // namespace

AgentMetrics::AgentMetrics(const GpuMonitor& monitor, const ReporterStats* stats,
                           std::string hostname)
    : monitor_(monitor), stats_(stats), hostname_(std::move(hostname)) {}

std::vector<prometheus::MetricFamily> AgentMetrics::Collect() const {
  const std::vector<GpuStatus> gpus = monitor_.Snapshot();
  struct GpuGauge {
    const char* name;
    const char* help;
    std::function<double(const GpuStatus&)> value;
  };
  const std::vector<GpuGauge> gauges = {
      {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).",
       [](const GpuStatus& g) { return g.reading.utilization_percent; }},
      {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).",
       [](const GpuStatus& g) { return static_cast<double>(g.reading.memory_used_mib); }},
      {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).",
       [](const GpuStatus& g) { return g.reading.temperature_celsius; }},
      {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).",
       [](const GpuStatus& g) { return g.reading.power_watts; }},
      {"DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.",
       [](const GpuStatus& g) { return static_cast<double>(g.last_xid); }},
      {"gpuaas_agent_gpu_healthy",
       "1 while the GPU takes part in placement, 0 after a hardware XID.",
       [](const GpuStatus& g) { return g.healthy ? 1.0 : 0.0; }},
  };
  std::vector<prometheus::MetricFamily> out;
  for (const GpuGauge& gauge : gauges) {
    prometheus::MetricFamily f = Family(gauge.name, gauge.help, prometheus::MetricType::Gauge);
    for (const GpuStatus& g : gpus) {
      f.metric.push_back(Sample({{"gpu", absl::StrCat(g.info.index)},
                                 {"UUID", g.info.uuid},
                                 {"device", absl::StrCat("nvidia", g.info.index)},
                                 {"modelName", g.info.nvml_name},
                                 {"Hostname", hostname_}},
                                prometheus::MetricType::Gauge, gauge.value(g)));
    }
    out.push_back(std::move(f));
  }
  // A counter beside the DCGM gauges: an alert on "an XID in the last minutes" needs every
  // event, and DCGM_FI_DEV_XID_ERRORS only holds the last one's number.
  prometheus::MetricFamily xids =
      Family("gpuaas_agent_gpu_xid_errors_total",
             "XID errors the GPU raised since the agent started.", prometheus::MetricType::Counter);
  for (const GpuStatus& g : gpus) {
    xids.metric.push_back(Sample({{"gpu", absl::StrCat(g.info.index)},
                                  {"UUID", g.info.uuid},
                                  {"device", absl::StrCat("nvidia", g.info.index)},
                                  {"modelName", g.info.nvml_name},
                                  {"Hostname", hostname_}},
                                 prometheus::MetricType::Counter,
                                 static_cast<double>(g.xid_errors)));
  }
  out.push_back(std::move(xids));
  if (stats_ != nullptr) {
    prometheus::MetricFamily connected =
        Family("gpuaas_agent_stock_connected",
               "1 while a heartbeat stream to the stock service is open and answering.",
               prometheus::MetricType::Gauge);
    connected.metric.push_back(
        Sample({}, prometheus::MetricType::Gauge, stats_->connected.load() ? 1 : 0));
    out.push_back(std::move(connected));
    prometheus::MetricFamily registrations =
        Family("gpuaas_agent_registrations_total", "RegisterNode calls that succeeded.",
               prometheus::MetricType::Counter);
    registrations.metric.push_back(Sample({}, prometheus::MetricType::Counter,
                                          static_cast<double>(stats_->registrations.load())));
    out.push_back(std::move(registrations));
    prometheus::MetricFamily heartbeats =
        Family("gpuaas_agent_heartbeats_total", "Heartbeats the stock service answered.",
               prometheus::MetricType::Counter);
    heartbeats.metric.push_back(Sample({}, prometheus::MetricType::Counter,
                                       static_cast<double>(stats_->heartbeats.load())));
    out.push_back(std::move(heartbeats));
  }
  return out;
}

}  // namespace gpuaas::agent
