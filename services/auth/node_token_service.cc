#include "services/auth/node_token_service.h"

namespace gpuaas::auth {

grpc::ServerUnaryReactor* NodeTokenServiceImpl::IssueNodeToken(grpc::CallbackServerContext* ctx,
                                                               const pb::IssueNodeTokenRequest* req,
                                                               pb::IssueNodeTokenResponse* resp) {
  return handler_.Run(ctx, [this, req, resp](const authz::Principal& p) {
    return auth_.IssueNodeToken(p, *req, *resp);
  });
}

}  // namespace gpuaas::auth
