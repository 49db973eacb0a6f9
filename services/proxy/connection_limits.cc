#include "services/proxy/connection_limits.h"

namespace gpuaas::proxy {

ConnectionLimits::Slot::~Slot() {
  if (limits_ != nullptr) {
    limits_->Release(client_);
  }
}

ConnectionLimits::Slot ConnectionLimits::TryAcquire(const std::string& client) {
  absl::MutexLock lock(&mu_);
  int64_t& mine = per_client_[client];
  if (total_ >= options_.max_connections || mine >= options_.max_connections_per_client) {
    if (mine == 0) {
      per_client_.erase(client);
    }
    return Slot();
  }
  ++mine;
  ++total_;
  return Slot(this, client);
}

void ConnectionLimits::Release(const std::string& client) {
  absl::MutexLock lock(&mu_);
  --total_;
  auto it = per_client_.find(client);
  if (it != per_client_.end() && --it->second <= 0) {
    per_client_.erase(it);
  }
}

}  // namespace gpuaas::proxy
