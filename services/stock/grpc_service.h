// The gRPC adapters of the stock service: each call goes to the domain through the shared
// rpc::Handler (authentication, worker pool, status mapping). StockService serves operators and
// services; NodeAgentService serves the node agents.
#pragma once

#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "libs/rpc/handler.h"
#include "services/stock/nodes.h"
#include "services/stock/specs.h"
#include "services/stock/stocks.h"

namespace gpuaas::stock {

class StockServiceImpl final : public pb::StockService::CallbackService {
 public:
  StockServiceImpl(SpecCatalog& specs, StockPool& stocks, NodeInventory& nodes,
                   rpc::Handler& handler)
      : specs_(specs), stocks_(stocks), nodes_(nodes), handler_(handler) {}

  grpc::ServerUnaryReactor* CreateSpec(grpc::CallbackServerContext* ctx,
                                       const pb::CreateSpecRequest* req, pb::Spec* resp) override;
  grpc::ServerUnaryReactor* GetSpec(grpc::CallbackServerContext* ctx, const pb::GetSpecRequest* req,
                                    pb::Spec* resp) override;
  grpc::ServerUnaryReactor* ListSpecs(grpc::CallbackServerContext* ctx,
                                      const pb::ListSpecsRequest* req,
                                      pb::ListSpecsResponse* resp) override;
  grpc::ServerUnaryReactor* UpdateSpec(grpc::CallbackServerContext* ctx,
                                       const pb::UpdateSpecRequest* req, pb::Spec* resp) override;
  grpc::ServerUnaryReactor* CreateStocks(grpc::CallbackServerContext* ctx,
                                         const pb::CreateStocksRequest* req,
                                         pb::CreateStocksResponse* resp) override;
  grpc::ServerUnaryReactor* DeleteStocks(grpc::CallbackServerContext* ctx,
                                         const pb::DeleteStocksRequest* req,
                                         pb::DeleteStocksResponse* resp) override;
  grpc::ServerUnaryReactor* ListStocks(grpc::CallbackServerContext* ctx,
                                       const pb::ListStocksRequest* req,
                                       pb::ListStocksResponse* resp) override;
  grpc::ServerUnaryReactor* SearchStocks(grpc::CallbackServerContext* ctx,
                                         const pb::SearchStocksRequest* req,
                                         pb::SearchStocksResponse* resp) override;
  grpc::ServerUnaryReactor* GetStockSummary(grpc::CallbackServerContext* ctx,
                                            const pb::GetStockSummaryRequest* req,
                                            pb::GetStockSummaryResponse* resp) override;
  grpc::ServerUnaryReactor* ClaimStock(grpc::CallbackServerContext* ctx,
                                       const pb::ClaimStockRequest* req, pb::Stock* resp) override;
  grpc::ServerUnaryReactor* ReleaseStock(grpc::CallbackServerContext* ctx,
                                         const pb::ReleaseStockRequest* req,
                                         pb::ReleaseStockResponse* resp) override;
  grpc::ServerUnaryReactor* ListNodes(grpc::CallbackServerContext* ctx,
                                      const pb::ListNodesRequest* req,
                                      pb::ListNodesResponse* resp) override;
  grpc::ServerUnaryReactor* GetNode(grpc::CallbackServerContext* ctx, const pb::GetNodeRequest* req,
                                    pb::Node* resp) override;
  grpc::ServerUnaryReactor* CordonNode(grpc::CallbackServerContext* ctx,
                                       const pb::CordonNodeRequest* req, pb::Node* resp) override;
  grpc::ServerUnaryReactor* UncordonNode(grpc::CallbackServerContext* ctx,
                                         const pb::UncordonNodeRequest* req,
                                         pb::Node* resp) override;
  grpc::ServerUnaryReactor* DrainNode(grpc::CallbackServerContext* ctx,
                                      const pb::DrainNodeRequest* req, pb::Node* resp) override;
  grpc::ServerUnaryReactor* DeleteSpec(grpc::CallbackServerContext* ctx,
                                       const pb::DeleteSpecRequest* req,
                                       pb::DeleteSpecResponse* resp) override;

 private:
  SpecCatalog& specs_;
  StockPool& stocks_;
  NodeInventory& nodes_;
  rpc::Handler& handler_;
};

class NodeAgentServiceImpl final : public pb::NodeAgentService::CallbackService {
 public:
  NodeAgentServiceImpl(NodeInventory& nodes, rpc::Handler& handler)
      : nodes_(nodes), handler_(handler) {}

  grpc::ServerUnaryReactor* RegisterNode(grpc::CallbackServerContext* ctx,
                                         const pb::RegisterNodeRequest* req,
                                         pb::RegisterNodeResponse* resp) override;
  grpc::ServerBidiReactor<pb::HeartbeatRequest, pb::HeartbeatResponse>* Heartbeat(
      grpc::CallbackServerContext* ctx) override;

 private:
  NodeInventory& nodes_;
  rpc::Handler& handler_;
};

}  // namespace gpuaas::stock
