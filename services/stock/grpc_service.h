// The gRPC adapter of the stock service: hands each call to the domain through the shared
// rpc::Handler (authentication, worker pool, status mapping). RPCs not yet built answer
// UNIMPLEMENTED (the generated base's default).
#pragma once

#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "libs/rpc/handler.h"
#include "services/stock/specs.h"

namespace gpuaas::stock {

class StockServiceImpl final : public pb::StockService::CallbackService {
 public:
  StockServiceImpl(SpecCatalog& specs, rpc::Handler& handler) : specs_(specs), handler_(handler) {}

  grpc::ServerUnaryReactor* CreateSpec(grpc::CallbackServerContext* ctx,
                                       const pb::CreateSpecRequest* req, pb::Spec* resp) override;
  grpc::ServerUnaryReactor* GetSpec(grpc::CallbackServerContext* ctx, const pb::GetSpecRequest* req,
                                    pb::Spec* resp) override;
  grpc::ServerUnaryReactor* ListSpecs(grpc::CallbackServerContext* ctx,
                                      const pb::ListSpecsRequest* req,
                                      pb::ListSpecsResponse* resp) override;
  grpc::ServerUnaryReactor* UpdateSpec(grpc::CallbackServerContext* ctx,
                                       const pb::UpdateSpecRequest* req, pb::Spec* resp) override;
  grpc::ServerUnaryReactor* DeleteSpec(grpc::CallbackServerContext* ctx,
                                       const pb::DeleteSpecRequest* req,
                                       pb::DeleteSpecResponse* resp) override;

 private:
  SpecCatalog& specs_;
  rpc::Handler& handler_;
};

}  // namespace gpuaas::stock
