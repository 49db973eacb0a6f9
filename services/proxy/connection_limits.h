// Caps on client connections, in total and per client address, so one client (or a flood
// from many) cannot take every file descriptor and coroutine the proxy has. Each connection
// holds a slot for its whole life (keep-alive and WebSocket tunnels included); a connection
// beyond either cap is refused at accept (plain HTTP gets a one-line 503, TLS a close).
#pragma once

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas::proxy {

struct ConnectionLimitOptions {
  int64_t max_connections = 10000;
  int64_t max_connections_per_client = 256;
};

class ConnectionLimits final {
 public:
  explicit ConnectionLimits(ConnectionLimitOptions options) : options_(options) {}

  // A connection's slot; releases it when destroyed. Move-only.
  class Slot final {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept : limits_(other.limits_), client_(std::move(other.client_)) {
      other.limits_ = nullptr;
    }
    Slot& operator=(Slot&&) = delete;
    ~Slot();
    bool held() const { return limits_ != nullptr; }

   private:
    friend class ConnectionLimits;
    Slot(ConnectionLimits* limits, std::string client)
        : limits_(limits), client_(std::move(client)) {}
    ConnectionLimits* limits_ = nullptr;
    std::string client_;
  };

  // A slot for a connection from `client` (its address), or an unheld one when a cap is
  // reached. Thread-safe, never blocks beyond a short lock.
  Slot TryAcquire(const std::string& client);

 private:
  void Release(const std::string& client);

  const ConnectionLimitOptions options_;
  absl::Mutex mu_;
  int64_t total_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, int64_t> per_client_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::proxy
