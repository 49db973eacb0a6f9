// The proxy's Prometheus series: answers by status class, open client connections and
// WebSocket tunnels, upstream failures, connections refused by the caps or ended by a revocation.
// Served by rpc::MetricsEndpoint (--metrics-listen).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <array>
#include <memory>

namespace gpuaas::proxy {

class ProxyMetrics final {
 public:
  ProxyMetrics();

  // A response of HTTP `status` was sent (or began: forwarded ones count at their header).
  void CountResponse(unsigned status);
  void CountUpstreamError() { upstream_errors_.Increment(); }
  // A connection refused at accept: a connection cap was reached (ProxyOptions::connection_limits).
  void CountRefusedConnection() { refused_connections_.Increment(); }
  // An open connection (a tunnel, a streamed body) ended because its access stopped holding
  // (open_connection_checks.h).
  void CountRevokedConnection() { revoked_connections_.Increment(); }
  prometheus::Gauge& connections() { return connections_; }
  prometheus::Gauge& tunnels() { return tunnels_; }
  prometheus::Gauge& routes() { return routes_; }

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& responses_;
  std::array<prometheus::Counter*, 6> by_class_{};  // 1xx..5xx, index 0 for others
  prometheus::Counter& upstream_errors_;
  prometheus::Counter& refused_connections_;
  prometheus::Counter& revoked_connections_;
  prometheus::Gauge& connections_;
  prometheus::Gauge& tunnels_;
  prometheus::Gauge& routes_;
};

}  // namespace gpuaas::proxy
