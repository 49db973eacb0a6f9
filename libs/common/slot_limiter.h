// Caps on a shared pool (log streams, connections): at most `total` slots taken at once, and at
// most `per_key` by any one key (a tenant, a workload), so one key cannot take the whole pool
// from the others. A slot is held by an RAII handle that may outlive the limiter.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas {

class SlotLimiter final {
  struct State;

 public:
  class Slot final {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept = default;
    Slot& operator=(Slot&& other) noexcept;
    ~Slot();

   private:
    friend class SlotLimiter;
    Slot(std::shared_ptr<State> state, std::string key)
        : state_(std::move(state)), key_(std::move(key)) {}
    void Release();

    std::shared_ptr<State> state_;
    std::string key_;
  };

  // `what` names the pool in errors ("log streams"), `key_kind` the keys ("tenant").
  SlotLimiter(int total, int per_key, std::string what, std::string key_kind);
  ~SlotLimiter();

  // A slot for `key`, or RESOURCE_EXHAUSTED naming the cap that is reached.
  absl::StatusOr<Slot> Acquire(std::string_view key);

  // Slots taken, in all and by `key` (for tests and metrics).
  int taken() const;
  int taken(std::string_view key) const;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace gpuaas
