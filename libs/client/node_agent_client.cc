#include "libs/client/node_agent_client.h"

#include "libs/client/internal/service_token.h"
#include "libs/client/internal/unary_call.h"
#include "libs/rpc/status.h"

namespace gpuaas::client {

HeartbeatCall::HeartbeatCall(std::unique_ptr<grpc::ClientContext> ctx, Cancellation* cancellation,
                             AccessTokens* tokens)
    : ctx_(std::move(ctx)), scope_(cancellation, *ctx_), tokens_(tokens) {}

absl::Status HeartbeatCall::Ended(const grpc::Status& status) const {
  internal::NoteAnswer(status, tokens_);
  return rpc::FromGrpcStatus(status);
}

NodeAgentClient::NodeAgentClient(std::shared_ptr<grpc::ChannelInterface> channel,
                                 AccessTokens* tokens, absl::Duration default_timeout)
    : stub_(stockpb::NodeAgentService::NewStub(std::move(channel))),
      tokens_(tokens),
      default_timeout_(default_timeout) {}

absl::StatusOr<stockpb::RegisterNodeResponse> NodeAgentClient::RegisterNode(
    const stockpb::RegisterNodeRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::RegisterNode, req, call, default_timeout_, tokens_);
}

absl::StatusOr<std::unique_ptr<HeartbeatCall>> NodeAgentClient::PrepareHeartbeat(
    grpc::CompletionQueue& cq, const CallContext& call) const {
  absl::StatusOr<CallContext> authorized = internal::WithServiceToken(call, tokens_);
  if (!authorized.ok()) return authorized.status();
  auto heartbeat = std::make_unique<HeartbeatCall>(
      authorized->NewClientContext(absl::InfiniteDuration()), call.cancellation(), tokens_);
  heartbeat->stream_ = stub_->PrepareAsyncHeartbeat(heartbeat->ctx_.get(), &cq);
  return heartbeat;
}

}  // namespace gpuaas::client
