#include "libs/client/node_workload_client.h"

#include "libs/client/internal/unary_call.h"
#include "libs/client/server_stream.h"
#include "libs/common/status_macros.h"

namespace gpuaas::client {

NodeWorkloadClient::NodeWorkloadClient(std::shared_ptr<grpc::ChannelInterface> channel,
                                       AccessTokens* tokens, absl::Duration default_timeout)
    : stub_(instancepb::NodeWorkloadService::NewStub(std::move(channel))),
      tokens_(tokens),
      default_timeout_(default_timeout) {}

absl::Status NodeWorkloadClient::WatchWorkloads(
    const instancepb::WatchWorkloadsRequest& req,
    const std::function<bool(const instancepb::WorkloadSet&)>& on_set,
    const CallContext& call) const {
  GPUAAS_ASSIGN_OR_RETURN(
      auto stream, internal::OpenServerStream(*stub_, &Stub::WatchWorkloads, req, call, tokens_));
  return stream->ReadEach(on_set);
}

absl::StatusOr<instancepb::ReportWorkloadsResponse> NodeWorkloadClient::ReportWorkloads(
    const instancepb::ReportWorkloadsRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ReportWorkloads, req, call, default_timeout_, tokens_);
}

}  // namespace gpuaas::client
