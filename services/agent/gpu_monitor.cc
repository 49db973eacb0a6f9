#include "services/agent/gpu_monitor.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "libs/common/logging.h"
#include "libs/common/xid.h"

namespace gpuaas::agent {

GpuMonitor::GpuMonitor(GpuSource& source, std::vector<GpuInfo> gpus, const Clock& clock,
                       Options options)
    : source_(source), clock_(clock), options_(options) {
  for (GpuInfo& g : gpus) {
    gpus_.push_back(GpuStatus{.info = std::move(g)});
    health_.emplace_back();
  }
}

void GpuMonitor::MarkUnhealthy(GpuStatus& gpu, Health& health, absl::Time now,
                               const std::string& why) {
  // Every new sign of trouble restarts the wait: a GPU comes back only after a quiet interval.
  health.next_probe = now + options_.reprobe_interval;
  if (gpu.healthy) {
    gpu.healthy = false;
    Logger("agent")->warn("GPU {} ({}) unhealthy: {}; re-probing every {}", gpu.info.index,
                          gpu.info.uuid, why, absl::FormatDuration(options_.reprobe_interval));
  }
}

void GpuMonitor::Poll() {
  // The source is called outside the lock, so Snapshot never waits on the driver.
  const std::vector<XidEvent> xids = source_.TakeXids();
  const size_t n = [&] {
    absl::MutexLock lock(&mu_);
    return gpus_.size();
  }();
  std::vector<absl::StatusOr<GpuReading>> readings;
  readings.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    readings.push_back(source_.Read(static_cast<int>(i)));
  }
  const absl::Time now = clock_.Now();

  std::vector<int> due;
  {
    absl::MutexLock lock(&mu_);
    for (const XidEvent& e : xids) {
      if (e.index < 0 || e.index >= static_cast<int>(n)) {
        continue;
      }
      GpuStatus& gpu = gpus_[e.index];
      gpu.last_xid = e.xid;
      ++gpu.xid_errors;
      if (XidMakesGpuUnhealthy(e.xid)) {
        MarkUnhealthy(gpu, health_[e.index], now,
                      absl::StrCat("XID ", e.xid, " (", std::string(XidDescription(e.xid)), ")"));
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (readings[i].ok()) {
        gpus_[i].reading = *readings[i];
      } else {
        MarkUnhealthy(gpus_[i], health_[i], now, readings[i].status().ToString());
      }
      if (!gpus_[i].healthy && now >= health_[i].next_probe) {
        due.push_back(static_cast<int>(i));
      }
    }
  }

  for (int i : due) {
    absl::Status probe = source_.Probe(i);
    absl::MutexLock lock(&mu_);
    GpuStatus& gpu = gpus_[i];
    if (probe.ok()) {
      gpu.healthy = true;
      Logger("agent")->info("GPU {} ({}) healthy again: re-probe passed", i, gpu.info.uuid);
    } else {
      health_[i].next_probe = now + options_.reprobe_interval;
      Logger("agent")->debug("GPU {} re-probe failed: {}", i, probe.ToString());
    }
  }
}

std::vector<GpuStatus> GpuMonitor::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return gpus_;
}

double PeakUtilization(const std::vector<GpuStatus>& gpus, const std::vector<std::string>& uuids) {
  double peak = 0;
  for (const GpuStatus& g : gpus) {
    if (std::find(uuids.begin(), uuids.end(), g.info.uuid) != uuids.end()) {
      peak = std::max(peak, g.reading.utilization_percent);
    }
  }
  return peak;
}

}  // namespace gpuaas::agent
