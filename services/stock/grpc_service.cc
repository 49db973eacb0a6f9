#include "services/stock/grpc_service.h"

#include "libs/common/status_macros.h"
#include "libs/rpc/stream.h"

namespace gpuaas::stock {
namespace {

using HeartbeatSessionBase = rpc::StreamSession<pb::HeartbeatRequest, pb::HeartbeatResponse>;

// One agent's stream: each heartbeat answered by the node's state.
class HeartbeatSession final : public HeartbeatSessionBase {
 public:
  explicit HeartbeatSession(std::unique_ptr<NodeInventory::HeartbeatStream> stream)
      : stream_(std::move(stream)) {}

  absl::StatusOr<std::optional<pb::HeartbeatResponse>> OnMessage(
      const pb::HeartbeatRequest& heartbeat) override {
    pb::HeartbeatResponse reply;
    GPUAAS_RETURN_IF_ERROR(stream_->OnHeartbeat(heartbeat, reply));
    return reply;
  }

 private:
  std::unique_ptr<NodeInventory::HeartbeatStream> stream_;
};

}  // namespace

grpc::ServerUnaryReactor* StockServiceImpl::CreateSpec(grpc::CallbackServerContext* ctx,
                                                       const pb::CreateSpecRequest* req,
                                                       pb::Spec* resp) {
  return rpc::RunDomain(handler_, ctx, specs_, &SpecCatalog::CreateSpec, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::GetSpec(grpc::CallbackServerContext* ctx,
                                                    const pb::GetSpecRequest* req, pb::Spec* resp) {
  return rpc::RunDomain(handler_, ctx, specs_, &SpecCatalog::GetSpec, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::ListSpecs(grpc::CallbackServerContext* ctx,
                                                      const pb::ListSpecsRequest* req,
                                                      pb::ListSpecsResponse* resp) {
  return rpc::RunDomain(handler_, ctx, specs_, &SpecCatalog::ListSpecs, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::UpdateSpec(grpc::CallbackServerContext* ctx,
                                                       const pb::UpdateSpecRequest* req,
                                                       pb::Spec* resp) {
  return rpc::RunDomain(handler_, ctx, specs_, &SpecCatalog::UpdateSpec, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::CreateStocks(grpc::CallbackServerContext* ctx,
                                                         const pb::CreateStocksRequest* req,
                                                         pb::CreateStocksResponse* resp) {
  return rpc::RunDomain(handler_, ctx, stocks_, &StockPool::CreateStocks, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::DeleteStocks(grpc::CallbackServerContext* ctx,
                                                         const pb::DeleteStocksRequest* req,
                                                         pb::DeleteStocksResponse* resp) {
  return rpc::RunDomain(handler_, ctx, stocks_, &StockPool::DeleteStocks, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::ListStocks(grpc::CallbackServerContext* ctx,
                                                       const pb::ListStocksRequest* req,
                                                       pb::ListStocksResponse* resp) {
  return rpc::RunDomain(handler_, ctx, stocks_, &StockPool::ListStocks, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::SearchStocks(grpc::CallbackServerContext* ctx,
                                                         const pb::SearchStocksRequest* req,
                                                         pb::SearchStocksResponse* resp) {
  return rpc::RunDomain(handler_, ctx, stocks_, &StockPool::SearchStocks, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::GetStockSummary(grpc::CallbackServerContext* ctx,
                                                            const pb::GetStockSummaryRequest* req,
                                                            pb::GetStockSummaryResponse* resp) {
  return rpc::RunDomain(handler_, ctx, stocks_, &StockPool::GetStockSummary, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::ClaimStock(grpc::CallbackServerContext* ctx,
                                                       const pb::ClaimStockRequest* req,
                                                       pb::Stock* resp) {
  return rpc::RunDomain(handler_, ctx, stocks_, &StockPool::ClaimStock, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::ReleaseStock(grpc::CallbackServerContext* ctx,
                                                         const pb::ReleaseStockRequest* req,
                                                         pb::ReleaseStockResponse* resp) {
  return rpc::RunDomain(handler_, ctx, stocks_, &StockPool::ReleaseStock, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::ListNodes(grpc::CallbackServerContext* ctx,
                                                      const pb::ListNodesRequest* req,
                                                      pb::ListNodesResponse* resp) {
  return rpc::RunDomain(handler_, ctx, nodes_, &NodeInventory::ListNodes, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::GetNode(grpc::CallbackServerContext* ctx,
                                                    const pb::GetNodeRequest* req, pb::Node* resp) {
  return rpc::RunDomain(handler_, ctx, nodes_, &NodeInventory::GetNode, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::CordonNode(grpc::CallbackServerContext* ctx,
                                                       const pb::CordonNodeRequest* req,
                                                       pb::Node* resp) {
  return rpc::RunDomain(handler_, ctx, nodes_, &NodeInventory::CordonNode, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::UncordonNode(grpc::CallbackServerContext* ctx,
                                                         const pb::UncordonNodeRequest* req,
                                                         pb::Node* resp) {
  return rpc::RunDomain(handler_, ctx, nodes_, &NodeInventory::UncordonNode, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::DrainNode(grpc::CallbackServerContext* ctx,
                                                      const pb::DrainNodeRequest* req,
                                                      pb::Node* resp) {
  return rpc::RunDomain(handler_, ctx, nodes_, &NodeInventory::DrainNode, req, resp);
}

grpc::ServerUnaryReactor* StockServiceImpl::DeleteSpec(grpc::CallbackServerContext* ctx,
                                                       const pb::DeleteSpecRequest* req,
                                                       pb::DeleteSpecResponse*) {
  return handler_.Run(
      ctx, [this, req](const authz::Principal& p) { return specs_.DeleteSpec(p, *req); });
}

grpc::ServerUnaryReactor* NodeAgentServiceImpl::RegisterNode(grpc::CallbackServerContext* ctx,
                                                             const pb::RegisterNodeRequest* req,
                                                             pb::RegisterNodeResponse* resp) {
  return rpc::RunDomain(handler_, ctx, nodes_, &NodeInventory::RegisterNode, req, resp);
}

grpc::ServerBidiReactor<pb::HeartbeatRequest, pb::HeartbeatResponse>*
NodeAgentServiceImpl::Heartbeat(grpc::CallbackServerContext* ctx) {
  return handler_.RunBidi<pb::HeartbeatRequest, pb::HeartbeatResponse>(
      ctx,
      [this](const authz::Principal& p) -> absl::StatusOr<std::unique_ptr<HeartbeatSessionBase>> {
        GPUAAS_ASSIGN_OR_RETURN(auto stream, nodes_.OpenHeartbeatStream(p));
        return std::make_unique<HeartbeatSession>(std::move(stream));
      });
}

}  // namespace gpuaas::stock
