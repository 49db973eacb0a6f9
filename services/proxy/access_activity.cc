#include "services/proxy/access_activity.h"

namespace gpuaas::proxy {

void AccessActivity::Note(const std::string& instance_id) {
  absl::MutexLock lock(&mu_);
  reached_.insert(instance_id);
}

absl::Status AccessActivity::Flush() {
  absl::flat_hash_set<std::string> batch;
  {
    absl::MutexLock lock(&mu_);
    batch.swap(reached_);
  }
  if (batch.empty()) {
    return absl::OkStatus();
  }
  absl::Status s = send_(std::vector<std::string>(batch.begin(), batch.end()));
  if (!s.ok()) {
    absl::MutexLock lock(&mu_);
    reached_.insert(batch.begin(), batch.end());
  }
  return s;
}

}  // namespace gpuaas::proxy
