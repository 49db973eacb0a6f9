// The HTTP side of the metrics: prometheus-cpp's Exposer (civetweb underneath) answering
// GET /metrics with the text exposition of every collectable it was given. Kept apart from
// Server so civetweb is compiled into one file only and tests can start it on its own.
#pragma once

#include <prometheus/collectable.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace gpuaas::rpc {

class MetricsEndpoint final {
 public:
  // Binds `address`, "host:port" where host is an IPv4 literal or empty (every interface;
  // Debian's civetweb has no IPv6), and port 0 picks a free one. Serves on two background
  // threads until destroyed; keeps the collectables alive until then.
  // Errors: INVALID_ARGUMENT for a malformed address, UNAVAILABLE when it cannot be bound.
  // Blocks only while binding.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& address,
      std::vector<std::shared_ptr<prometheus::Collectable>> collectables);

  // Stops serving and joins the threads; returns within milliseconds.
  ~MetricsEndpoint();

  int port() const { return port_; }

 private:
  MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer, int port, std::string local_host,
                  std::vector<std::shared_ptr<prometheus::Collectable>> collectables);

  // The exposer holds only weak pointers; these keep the collectables alive while it serves.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_;
  // Where the destructor connects to wake civetweb (see there): the bound address, with
  // 0.0.0.0 replaced by loopback.
  std::string local_host_;
};

}  // namespace gpuaas::rpc
