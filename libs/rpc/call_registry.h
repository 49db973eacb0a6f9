// What the per-call log line needs but the server interceptor cannot see by itself: who the
// caller is, which the handler learns only after it authenticated the token on a worker.
// The interceptor registers each call when it starts and takes the entry back when it ends;
// the handler fills in the principal in between.
#pragma once

#include <grpcpp/server_context.h>

#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas::rpc {

class CallRegistry final {
 public:
  // `method` must outlive the call (gRPC's method strings live as long as the server).
  void Begin(const grpc::ServerContextBase& ctx, std::string_view method);

  // Records "user@tenant" for the call; ignored for calls that were never registered.
  void SetPrincipal(const grpc::ServerContextBase& ctx, std::string principal);

  // The method registered for the call, or "" when unknown.
  std::string_view Method(const grpc::ServerContextBase& ctx) const;

  // How many calls of `method` ("/grpc.health.v1.Health/Watch") are open now.
  int Open(std::string_view method) const;

  // Forgets the call and returns its principal ("" when none was set).
  std::string End(const grpc::ServerContextBase& ctx);

 private:
  struct Entry {
    std::string_view method;
    std::string principal;
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<const grpc::ServerContextBase*, Entry> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::rpc
