#include "libs/common/slot_limiter.h"

#include <functional>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas {

struct SlotLimiter::State {
  State(int total, int per_key, std::string what, std::string key_kind)
      : total(total), per_key(per_key), what(std::move(what)), key_kind(std::move(key_kind)) {}

  const int total;
  const int per_key;
  const std::string what;
  const std::string key_kind;
  mutable absl::Mutex mu;
  int taken ABSL_GUARDED_BY(mu) = 0;
  // Only keys holding a slot: the map never grows with keys seen once.
  std::map<std::string, int, std::less<>> by_key ABSL_GUARDED_BY(mu);
};

SlotLimiter::SlotLimiter(int total, int per_key, std::string what, std::string key_kind)
    : state_(std::make_shared<State>(total, per_key, std::move(what), std::move(key_kind))) {}

SlotLimiter::~SlotLimiter() = default;

absl::StatusOr<SlotLimiter::Slot> SlotLimiter::Acquire(std::string_view key) {
  State& s = *state_;
  absl::MutexLock lock(&s.mu);
  if (s.taken >= s.total) {
    return absl::ResourceExhaustedError(
        absl::StrCat("at most ", s.total, " ", s.what, " at once; retry later"));
  }
  auto it = s.by_key.find(key);
  if (it == s.by_key.end()) {
    it = s.by_key.emplace(std::string(key), 0).first;
  }
  int& mine = it->second;
  if (mine >= s.per_key) {
    return absl::ResourceExhaustedError(absl::StrCat("at most ", s.per_key, " ", s.what,
                                                     " at once per ", s.key_kind, "; retry later"));
  }
  ++mine;
  ++s.taken;
  return Slot(state_, std::string(key));
}

int SlotLimiter::taken() const {
  absl::MutexLock lock(&state_->mu);
  return state_->taken;
}

int SlotLimiter::taken(std::string_view key) const {
  absl::MutexLock lock(&state_->mu);
  auto it = state_->by_key.find(key);
  return it == state_->by_key.end() ? 0 : it->second;
}

SlotLimiter::Slot& SlotLimiter::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    Release();
    state_ = std::move(other.state_);
    key_ = std::move(other.key_);
  }
  return *this;
}

SlotLimiter::Slot::~Slot() { Release(); }

void SlotLimiter::Slot::Release() {
  if (state_ == nullptr) {
    return;
  }
  absl::MutexLock lock(&state_->mu);
  auto it = state_->by_key.find(key_);
  if (--it->second == 0) {
    state_->by_key.erase(it);
  }
  --state_->taken;
  state_ = nullptr;
}

}  // namespace gpuaas
