// A tiny HTTP server for Prometheus scrapes: GET /metrics answers with whatever `render`
// returns. Kept apart from Server so cpp-httplib is compiled in one file only.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace gpuaas::rpc {

class MetricsHttpServer final {
 public:
  explicit MetricsHttpServer(std::function<std::string()> render);
  ~MetricsHttpServer();  // stops the server

  // Binds "host:port" (port 0 picks a free one) and serves on a background thread.
  // Returns the bound port. INVALID_ARGUMENT for a malformed address, UNAVAILABLE when the
  // port cannot be bound.
  absl::StatusOr<int> Start(const std::string& address);

  // Stops serving and joins the thread; idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Splits "host:port" / "[v6]:port"; INVALID_ARGUMENT when there is no numeric port.
absl::StatusOr<std::pair<std::string, int>> SplitHostPort(const std::string& address);

}  // namespace gpuaas::rpc
