// Per-method RPC counters, a latency histogram and the in-flight and open-stream gauges, kept
// in a prometheus-cpp registry. The server interceptor feeds it; MetricsEndpoint serves it.
//
//   gpuaas_rpc_requests_total{service,method}       counter, every finished call or stream
//   gpuaas_rpc_errors_total{service,method,code}    counter, non-OK calls and streams by code name
//   gpuaas_rpc_latency_seconds{service,method}      histogram over kLatencyBuckets, unary calls
//   gpuaas_rpc_in_flight                            gauge, unary calls started and not finished
//   gpuaas_rpc_open_streams                         gauge, streaming calls open
//
// A stream lives as long as its client wants (a node agent's heartbeat stream, for hours), so
// it is neither "in flight" work nor a latency: it counts in its own gauge while open, and in
// requests/errors once, when it ends.
#pragma once

#include <grpcpp/support/status.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace gpuaas::rpc {

// Upper bounds (seconds) of the latency histogram: 0.5 ms to 10 s, about 2.5x apart.
inline constexpr std::array<double, 14> kLatencyBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

class RpcMetrics final {
 public:
  // Adds the five families to `registry`, which must outlive this object.
  explicit RpcMetrics(prometheus::Registry& registry);
  ~RpcMetrics();

  RpcMetrics(const RpcMetrics&) = delete;
  RpcMetrics& operator=(const RpcMetrics&) = delete;

  // `full_method` is gRPC's "/package.Service/Method". Thread-safe; never blocks on I/O.
  // A method's series are created on its first call and cached, so later calls take no lock
  // of ours and do no label hashing inside prometheus-cpp (the histogram still locks its
  // own mutex); error series appear on the first error with that code.
  void Record(std::string_view full_method, grpc::StatusCode code, absl::Duration latency);
  // A stream's end: requests and errors, no latency.
  void RecordStream(std::string_view full_method, grpc::StatusCode code);

  void CallStarted() { in_flight_.Increment(); }
  void CallEnded() { in_flight_.Decrement(); }
  void StreamOpened() { open_streams_.Increment(); }
  void StreamClosed() { open_streams_.Decrement(); }

 private:
  struct MethodSeries;

  MethodSeries& SeriesFor(std::string_view full_method);
  void CountEnd(MethodSeries& series, grpc::StatusCode code);
  MethodSeries* FindCached(std::string_view full_method, size_t hash) const;
  MethodSeries& AddSeries(std::string_view full_method, size_t hash);
  prometheus::Counter& ErrorCounter(MethodSeries& series, grpc::StatusCode code);

  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Counter>& errors_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Gauge& in_flight_;
  prometheus::Gauge& open_streams_;

  // The steady-state lookup, lock-free: an open-addressing table of the methods seen so far,
  // filled only under mu_ and never emptied, so readers need no lock. A server has a few
  // dozen methods; beyond half the slots, new ones are found in methods_ under the lock.
  absl::Mutex mu_;
  static constexpr size_t kCacheSlots = 256;
  std::array<std::atomic<MethodSeries*>, kCacheSlots> cache_{};
  size_t cached_ ABSL_GUARDED_BY(mu_) = 0;
  // Owns every method's series, keyed by the full method name; they never move.
  absl::flat_hash_map<std::string, std::unique_ptr<MethodSeries>> methods_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::rpc
