#include "services/stock/grpc_service.h"

namespace gpuaas::stock {

grpc::ServerUnaryReactor* StockServiceImpl::CreateSpec(grpc::CallbackServerContext* ctx,
                                                       const pb::CreateSpecRequest* req,
                                                       pb::Spec* resp) {
  return handler_.Run(ctx, [this, req, resp](const authz::Principal& p) {
    return specs_.CreateSpec(p, *req, *resp);
  });
}

grpc::ServerUnaryReactor* StockServiceImpl::GetSpec(grpc::CallbackServerContext* ctx,
                                                    const pb::GetSpecRequest* req, pb::Spec* resp) {
  return handler_.Run(
      ctx, [this, req, resp](const authz::Principal& p) { return specs_.GetSpec(p, *req, *resp); });
}

grpc::ServerUnaryReactor* StockServiceImpl::ListSpecs(grpc::CallbackServerContext* ctx,
                                                      const pb::ListSpecsRequest* req,
                                                      pb::ListSpecsResponse* resp) {
  return handler_.Run(ctx, [this, req, resp](const authz::Principal& p) {
    return specs_.ListSpecs(p, *req, *resp);
  });
}

grpc::ServerUnaryReactor* StockServiceImpl::UpdateSpec(grpc::CallbackServerContext* ctx,
                                                       const pb::UpdateSpecRequest* req,
                                                       pb::Spec* resp) {
  return handler_.Run(ctx, [this, req, resp](const authz::Principal& p) {
    return specs_.UpdateSpec(p, *req, *resp);
  });
}

grpc::ServerUnaryReactor* StockServiceImpl::DeleteSpec(grpc::CallbackServerContext* ctx,
                                                       const pb::DeleteSpecRequest* req,
                                                       pb::DeleteSpecResponse*) {
  return handler_.Run(
      ctx, [this, req](const authz::Principal& p) { return specs_.DeleteSpec(p, *req); });
}

}  // namespace gpuaas::stock
