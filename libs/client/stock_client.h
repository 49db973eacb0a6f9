// The stock service (gpuaas.stock.v1.StockService) for the other gpuaas binaries and the CLI:
// one method per RPC, named as in stock.proto, each blocking until the answer or the call's
// deadline. The instance service claims and releases stocks through it; gpuaasctl manages
// specs, stocks and nodes.
//
//   GPUAAS_ASSIGN_OR_RETURN(auto channel, client::OpenChannel(endpoint.address, endpoint.tls));
//   client::StockClient stock(channel, absl::Seconds(2));
//   stock::v1::ClaimStockRequest req;
//   req.set_spec_name("a100.1x");
//   req.set_instance_id(instance_id);
//   GPUAAS_ASSIGN_OR_RETURN(
//       stock::v1::Stock claimed,
//       stock.ClaimStock(req, client::CallContext::FromIncoming(*ctx).set_bearer_token(token)));
//
// Every method: the request as in stock.proto, `call` for the deadline, the bearer token and
// the incoming call to follow (call_context.h). Errors: the codes stock.proto documents for the
// RPC, with the server's message; UNAUTHENTICATED without a valid token (every RPC needs one);
// UNAVAILABLE when the service cannot be reached or is overloaded; DEADLINE_EXCEEDED when the
// deadline passed; CANCELLED when the incoming call this one follows was cancelled. Thread-safe:
// one client serves every thread.
#pragma once

#include <grpcpp/channel.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "libs/client/call_context.h"
#include "libs/client/pending_call.h"

namespace gpuaas::client {

namespace stockpb = ::gpuaas::stock::v1;

class StockClient final {
 public:
  // `channel` from OpenChannel; `default_timeout` bounds every call whose CallContext sets
  // none. Does not connect.
  explicit StockClient(std::shared_ptr<grpc::ChannelInterface> channel,
                       absl::Duration default_timeout = kDefaultTimeout);

  absl::StatusOr<stockpb::Spec> CreateSpec(const stockpb::CreateSpecRequest& req,
                                           const CallContext& call = {}) const;
  absl::StatusOr<stockpb::Spec> GetSpec(const stockpb::GetSpecRequest& req,
                                        const CallContext& call = {}) const;
  // GetSpec started without waiting: several calls in flight at once (pending_call.h).
  PendingCall<stockpb::Spec> StartGetSpec(const stockpb::GetSpecRequest& req,
                                          const CallContext& call = {}) const;
  absl::StatusOr<stockpb::ListSpecsResponse> ListSpecs(const stockpb::ListSpecsRequest& req,
                                                       const CallContext& call = {}) const;
  absl::StatusOr<stockpb::Spec> UpdateSpec(const stockpb::UpdateSpecRequest& req,
                                           const CallContext& call = {}) const;
  absl::StatusOr<stockpb::DeleteSpecResponse> DeleteSpec(const stockpb::DeleteSpecRequest& req,
                                                         const CallContext& call = {}) const;

  absl::StatusOr<stockpb::CreateStocksResponse> CreateStocks(
      const stockpb::CreateStocksRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<stockpb::DeleteStocksResponse> DeleteStocks(
      const stockpb::DeleteStocksRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<stockpb::ListStocksResponse> ListStocks(const stockpb::ListStocksRequest& req,
                                                         const CallContext& call = {}) const;
  absl::StatusOr<stockpb::SearchStocksResponse> SearchStocks(
      const stockpb::SearchStocksRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<stockpb::GetStockSummaryResponse> GetStockSummary(
      const stockpb::GetStockSummaryRequest& req, const CallContext& call = {}) const;

  absl::StatusOr<stockpb::Stock> ClaimStock(const stockpb::ClaimStockRequest& req,
                                            const CallContext& call = {}) const;
  absl::StatusOr<stockpb::ReleaseStockResponse> ReleaseStock(
      const stockpb::ReleaseStockRequest& req, const CallContext& call = {}) const;

  absl::StatusOr<stockpb::ListNodesResponse> ListNodes(const stockpb::ListNodesRequest& req,
                                                       const CallContext& call = {}) const;
  absl::StatusOr<stockpb::Node> GetNode(const stockpb::GetNodeRequest& req,
                                        const CallContext& call = {}) const;
  absl::StatusOr<stockpb::Node> CordonNode(const stockpb::CordonNodeRequest& req,
                                           const CallContext& call = {}) const;
  absl::StatusOr<stockpb::Node> UncordonNode(const stockpb::UncordonNodeRequest& req,
                                             const CallContext& call = {}) const;
  absl::StatusOr<stockpb::Node> DrainNode(const stockpb::DrainNodeRequest& req,
                                          const CallContext& call = {}) const;

 private:
  using Stub = ::gpuaas::stock::v1::StockService::StubInterface;

  std::unique_ptr<Stub> stub_;
  absl::Duration default_timeout_;
};

}  // namespace gpuaas::client
