// Runs unary callback handlers: authenticates the bearer token (unless the method is public),
// moves the work to a worker pool so blocking database calls never hold a gRPC thread,
// catches every exception, and maps the absl::Status to a grpc::Status.
//
//   grpc::ServerUnaryReactor* GetTenant(grpc::CallbackServerContext* ctx,
//                                       const GetTenantRequest* req, Tenant* resp) override {
//     return handler_.Run(ctx, [=, this](const authz::Principal& p) {
//       return service_.GetTenant(p, *req, *resp);
//     });
//   }
//
// `req`, `resp` and `ctx` stay valid until the reactor finishes, which Handler does only after
// `fn` returned, so capturing them by pointer is safe.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "libs/authz/principal.h"
#include "libs/authz/verifier.h"
#include "libs/common/thread_pool.h"
#include "libs/rpc/call_registry.h"

namespace gpuaas::rpc {

class Handler final {
 public:
  // `calls` (optional, not owned) receives the principal of each call for the per-call log
  // line; Server passes its own.
  Handler(authz::Authenticator& authenticator, ThreadPool& pool, CallRegistry* calls = nullptr);

  // Authenticated call: UNAUTHENTICATED before `fn` runs when the token is missing or bad
  // (UNAVAILABLE when the authenticator cannot fetch keys). `fn` runs on the pool; an
  // exception from it becomes INTERNAL "internal error". When the pool's queue is full the
  // call fails UNAVAILABLE at once without running `fn`. Never blocks the calling thread.
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* ctx,
                                std::function<absl::Status(const authz::Principal&)> fn);

  // Public call (Login, Refresh, ExchangeApiKey, GetJwks): no token needed.
  grpc::ServerUnaryReactor* RunPublic(grpc::CallbackServerContext* ctx,
                                      std::function<absl::Status()> fn);

 private:
  // Queues `work` on the pool, or finishes the call UNAVAILABLE when the queue is full.
  void Dispatch(grpc::ServerUnaryReactor* reactor, std::function<void()> work);

  // Runs `body` on the calling (pool) thread, turning any exception into INTERNAL.
  absl::Status Guarded(const grpc::CallbackServerContext& ctx,
                       const std::function<absl::Status()>& body);

  authz::Authenticator& authenticator_;
  ThreadPool& pool_;
  CallRegistry* calls_;
};

// "user@tenant" (or "user" for a principal without a tenant): how logs name a caller.
std::string PrincipalLabel(const authz::Principal& p);

// The peer's host without the "ipv4:"/"ipv6:" prefix and without the port ("127.0.0.1",
// "::1"), for rate limits and logs. Unix-socket peers return the socket path.
std::string PeerAddress(const grpc::CallbackServerContext& ctx);
std::string PeerAddress(std::string_view grpc_peer);

}  // namespace gpuaas::rpc
