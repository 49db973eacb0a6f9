// The agent's view of its GPUs: the latest gauges and each GPU's health, kept current by polling
// a GpuSource. A hardware XID (libs/common/xid.h) makes a GPU unhealthy, and so does a device
// that stops answering; an unhealthy GPU is re-probed every reprobe interval and is healthy
// again once a probe passes with no new hardware XID since the last one. Unhealthy is never
// permanent: a GPU that recovers comes back without a restart.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libs/common/clock.h"
#include "services/agent/gpu_source.h"

namespace gpuaas::agent {

// One GPU as the agent reports it.
struct GpuStatus {
  GpuInfo info;
  GpuReading reading;  // the last successful reading
  bool healthy = true;
  int32_t last_xid = 0;  // 0 = none seen since the agent started
  // XID errors seen since the agent started, every class: a repeat of the same XID counts too,
  // which last_xid cannot show (gpuaas_agent_gpu_xid_errors_total).
  int64_t xid_errors = 0;
};

class GpuMonitor final {
 public:
  struct Options {
    absl::Duration reprobe_interval = absl::Seconds(30);
  };

  // `source` and `clock` must outlive the monitor; `gpus` from source.Discover().
  GpuMonitor(GpuSource& source, std::vector<GpuInfo> gpus, const Clock& clock, Options options);

  // One round: takes the XIDs raised since the last round, reads every GPU, and re-probes the
  // unhealthy GPUs whose time has come. Logs each change of health once. Blocks on the source;
  // call it from one thread at a time (main.cc: a PeriodicTask).
  void Poll();

  // The GPUs as of the last Poll, in index order. Thread-safe; never blocks on the source.
  std::vector<GpuStatus> Snapshot() const;

 private:
  struct Health {
    absl::Time next_probe = absl::InfinitePast();
  };

  void MarkUnhealthy(GpuStatus& gpu, Health& health, absl::Time now, const std::string& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  GpuSource& source_;
  const Clock& clock_;
  const Options options_;

  mutable absl::Mutex mu_;
  std::vector<GpuStatus> gpus_ ABSL_GUARDED_BY(mu_);
  std::vector<Health> health_ ABSL_GUARDED_BY(mu_);
};

// The highest utilization, in percent, among `gpus` whose UUID is in `uuids`; 0 for none.
double PeakUtilization(const std::vector<GpuStatus>& gpus, const std::vector<std::string>& uuids);

}  // namespace gpuaas::agent
