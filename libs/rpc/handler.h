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
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "libs/authz/principal.h"
#include "libs/authz/verifier.h"
#include "libs/common/thread_pool.h"

namespace gpuaas::rpc {

class Handler final {
 public:
  Handler(authz::Authenticator& authenticator, ThreadPool& pool);

  // Authenticated call: UNAUTHENTICATED before `fn` runs when the token is missing or bad.
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* ctx,
                                std::function<absl::Status(const authz::Principal&)> fn);

  // Public call (Login, Refresh, ExchangeApiKey, GetJwks): no token needed.
  grpc::ServerUnaryReactor* RunPublic(grpc::CallbackServerContext* ctx,
                                      std::function<absl::Status()> fn);

 private:
  authz::Authenticator& authenticator_;
  ThreadPool& pool_;
};

// The peer's address without the "ipv4:" prefix, for rate limits and logs.
std::string PeerAddress(const grpc::CallbackServerContext& ctx);

}  // namespace gpuaas::rpc
