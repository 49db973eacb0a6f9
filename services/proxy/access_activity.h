// Which instances were reached through the proxy, sent to the instance service every
// --report-interval (AccessService.ReportAccess; main.cc's PeriodicTask calls Flush), where idle
// auto-stop counts them as active.
// Noting a reach is a set insert under a mutex, cheap enough for every request.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas::proxy {

class AccessActivity final {
 public:
  using Send = std::function<absl::Status(const std::vector<std::string>&)>;
  explicit AccessActivity(Send send) : send_(std::move(send)) {}

  // A request reached `instance_id`. Thread-safe, never blocks on I/O.
  void Note(const std::string& instance_id) ABSL_LOCKS_EXCLUDED(mu_);

  // Sends what was noted since the last report (nothing when nothing was); what fails to go
  // is kept for the next. Blocks on the RPC.
  absl::Status Flush() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const Send send_;
  absl::Mutex mu_;
  absl::flat_hash_set<std::string> reached_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::proxy
