// The gRPC adapter of NodeTokenService (auth.proto): hands IssueNodeToken to the domain (Auth)
// through the shared rpc::Handler, which authenticates the caller as for AuthService.
#pragma once

#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/rpc/handler.h"
#include "services/auth/auth.h"

namespace gpuaas::auth {

class NodeTokenServiceImpl final : public pb::NodeTokenService::CallbackService {
 public:
  NodeTokenServiceImpl(Auth& auth, rpc::Handler& handler) : auth_(auth), handler_(handler) {}

  grpc::ServerUnaryReactor* IssueNodeToken(grpc::CallbackServerContext* ctx,
                                           const pb::IssueNodeTokenRequest* req,
                                           pb::IssueNodeTokenResponse* resp) override;

 private:
  Auth& auth_;
  rpc::Handler& handler_;
};

}  // namespace gpuaas::auth
