// Per-method RPC counters and latency histograms, rendered in the Prometheus text format
// (version 0.0.4). The server interceptor feeds it; the metrics HTTP endpoint renders it.
#pragma once

#include <grpcpp/support/status.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace gpuaas::rpc {

// Upper bounds (seconds) of the latency histogram: 0.5 ms to 10 s, about 2.5x apart.
inline constexpr std::array<double, 14> kLatencyBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

class RpcMetrics final {
 public:
  // `full_method` is gRPC's "/package.Service/Method". Thread-safe; never blocks on I/O.
  void Record(std::string_view full_method, grpc::StatusCode code, absl::Duration latency);

  void CallStarted() { in_flight_.fetch_add(1, std::memory_order_relaxed); }
  void CallEnded() { in_flight_.fetch_sub(1, std::memory_order_relaxed); }

  // gpuaas_rpc_requests_total{service,method}, gpuaas_rpc_errors_total{service,method,code},
  // gpuaas_rpc_latency_seconds{service,method} and gpuaas_rpc_in_flight.
  std::string Render() const;

 private:
  struct MethodStats {
    uint64_t requests = 0;
    std::array<uint64_t, kLatencyBuckets.size()> buckets{};  // non-cumulative
    double latency_sum = 0;
    std::map<std::string, uint64_t> errors;  // code name -> count
  };
  using Key = std::pair<std::string, std::string>;  // service, method

  mutable absl::Mutex mu_;
  std::map<Key, MethodStats> methods_ ABSL_GUARDED_BY(mu_);  // ordered: stable output
  std::atomic<int64_t> in_flight_{0};
};

// process_resident_memory_bytes, process_cpu_seconds_total, process_open_fds and
// process_threads, read from /proc and getrusage at scrape time.
std::string RenderProcessMetrics();

}  // namespace gpuaas::rpc
