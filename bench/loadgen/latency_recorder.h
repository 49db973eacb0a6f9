// Collects the outcome of every measured call and summarises it: counts by status code and
// exact latency percentiles (every sample is kept; a 30 s run at 500/s is 15k numbers, so
// there is no reason to trade accuracy for a histogram's memory).
#pragma once

#include <grpcpp/support/status_code_enum.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace gpuaas::bench {

struct LatencySummary {
  int64_t completed = 0;  // calls that finished (any status)
  int64_t ok = 0;
  std::map<std::string, int64_t> errors;  // status code name -> count
  // Of all completed calls, successes and failures alike: a failing call still cost its caller.
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0, mean_ms = 0;
};

class LatencyRecorder final {
 public:
  // Thread-safe; called from gRPC's completion threads.
  void Record(grpc::StatusCode code, absl::Duration latency);

  LatencySummary Summarize() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<int64_t> latencies_ns_ ABSL_GUARDED_BY(mu_);
  std::map<grpc::StatusCode, int64_t> codes_ ABSL_GUARDED_BY(mu_);
};

// The nearest-rank percentile (q in [0, 1]) of sorted values; 0 when empty.
int64_t Percentile(const std::vector<int64_t>& sorted, double q);

}  // namespace gpuaas::bench
