#include "libs/client/stock_client.h"

#include "libs/client/internal/unary_call.h"

namespace gpuaas::client {

StockClient::StockClient(std::shared_ptr<grpc::ChannelInterface> channel,
                         absl::Duration default_timeout)
    : stub_(::gpuaas::stock::v1::StockService::NewStub(std::move(channel))),
      default_timeout_(default_timeout) {}

absl::StatusOr<stockpb::Spec> StockClient::CreateSpec(const stockpb::CreateSpecRequest& req,
                                                      const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::CreateSpec, req, call, default_timeout_);
}

absl::StatusOr<stockpb::Spec> StockClient::GetSpec(const stockpb::GetSpecRequest& req,
                                                   const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::GetSpec, req, call, default_timeout_);
}

PendingCall<stockpb::Spec> StockClient::StartGetSpec(const stockpb::GetSpecRequest& req,
                                                     const CallContext& call) const {
  return internal::StartUnaryCall(*stub_, &Stub::async_interface::GetSpec, req, call,
                                  default_timeout_);
}

absl::StatusOr<stockpb::ListSpecsResponse> StockClient::ListSpecs(
    const stockpb::ListSpecsRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListSpecs, req, call, default_timeout_);
}

absl::StatusOr<stockpb::Spec> StockClient::UpdateSpec(const stockpb::UpdateSpecRequest& req,
                                                      const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::UpdateSpec, req, call, default_timeout_);
}

absl::StatusOr<stockpb::DeleteSpecResponse> StockClient::DeleteSpec(
    const stockpb::DeleteSpecRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::DeleteSpec, req, call, default_timeout_);
}

absl::StatusOr<stockpb::CreateStocksResponse> StockClient::CreateStocks(
    const stockpb::CreateStocksRequest& req, const CallContext& call) const {
  return internal::RepeatableUnaryCall(!req.operation_id().empty(), *stub_, &Stub::CreateStocks,
                                       req, call, default_timeout_);
}

absl::StatusOr<stockpb::DeleteStocksResponse> StockClient::DeleteStocks(
    const stockpb::DeleteStocksRequest& req, const CallContext& call) const {
  return internal::RepeatableUnaryCall(!req.operation_id().empty(), *stub_, &Stub::DeleteStocks,
                                       req, call, default_timeout_);
}

absl::StatusOr<stockpb::ListStocksResponse> StockClient::ListStocks(
    const stockpb::ListStocksRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListStocks, req, call, default_timeout_);
}

absl::StatusOr<stockpb::SearchStocksResponse> StockClient::SearchStocks(
    const stockpb::SearchStocksRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::SearchStocks, req, call, default_timeout_);
}

absl::StatusOr<stockpb::GetStockSummaryResponse> StockClient::GetStockSummary(
    const stockpb::GetStockSummaryRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::GetStockSummary, req, call, default_timeout_);
}

absl::StatusOr<stockpb::Stock> StockClient::ClaimStock(const stockpb::ClaimStockRequest& req,
                                                       const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ClaimStock, req, call, default_timeout_);
}

absl::StatusOr<stockpb::ReleaseStockResponse> StockClient::ReleaseStock(
    const stockpb::ReleaseStockRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ReleaseStock, req, call, default_timeout_);
}

absl::StatusOr<stockpb::ListNodesResponse> StockClient::ListNodes(
    const stockpb::ListNodesRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListNodes, req, call, default_timeout_);
}

absl::StatusOr<stockpb::Node> StockClient::GetNode(const stockpb::GetNodeRequest& req,
                                                   const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::GetNode, req, call, default_timeout_);
}

absl::StatusOr<stockpb::Node> StockClient::CordonNode(const stockpb::CordonNodeRequest& req,
                                                      const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::CordonNode, req, call, default_timeout_);
}

absl::StatusOr<stockpb::Node> StockClient::UncordonNode(const stockpb::UncordonNodeRequest& req,
                                                        const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::UncordonNode, req, call, default_timeout_);
}

absl::StatusOr<stockpb::Node> StockClient::DrainNode(const stockpb::DrainNodeRequest& req,
                                                     const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::DrainNode, req, call, default_timeout_);
}
}  // namespace gpuaas::client
