// The standard process_* metrics (the names Prometheus' Go and Python clients export), read
// from /proc and getrusage each time the endpoint is scraped, so nothing runs between scrapes:
//
//   process_resident_memory_bytes  gauge
//   process_cpu_seconds_total      counter, user + system
//   process_open_fds               gauge
//   process_threads                gauge
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <vector>

namespace gpuaas::rpc {

class ProcessMetrics final : public prometheus::Collectable {
 public:
  // Thread-safe (no state); reads a few /proc files, so it does block briefly on them.
  std::vector<prometheus::MetricFamily> Collect() const override;
};

}  // namespace gpuaas::rpc
