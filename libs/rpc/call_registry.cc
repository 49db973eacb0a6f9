#include "libs/rpc/call_registry.h"

#include <utility>

namespace gpuaas::rpc {

void CallRegistry::Begin(const grpc::ServerContextBase& ctx, std::string_view method) {
  absl::MutexLock lock(&mu_);
  calls_[&ctx] = Entry{method, {}};
}

void CallRegistry::SetPrincipal(const grpc::ServerContextBase& ctx, std::string principal) {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(&ctx);
  if (it != calls_.end()) {
    it->second.principal = std::move(principal);
  }
}

std::string_view CallRegistry::Method(const grpc::ServerContextBase& ctx) const {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(&ctx);
  return it == calls_.end() ? std::string_view() : it->second.method;
}

int CallRegistry::Open(std::string_view method) const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& [ctx, entry] : calls_) {
    n += entry.method == method ? 1 : 0;
  }
  return n;
}

std::string CallRegistry::End(const grpc::ServerContextBase& ctx) {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(&ctx);
  if (it == calls_.end()) {
    return {};
  }
  std::string principal = std::move(it->second.principal);
  calls_.erase(it);
  return principal;
}

}  // namespace gpuaas::rpc
