#include "libs/client/instance_client.h"

#include "libs/client/internal/unary_call.h"
#include "libs/common/status_macros.h"

namespace gpuaas::client {

InstanceClient::InstanceClient(std::shared_ptr<grpc::ChannelInterface> channel,
                               absl::Duration default_timeout, AccessTokens* tokens)
    : instances_(::gpuaas::instance::v1::InstanceService::NewStub(channel)),
      images_(::gpuaas::instance::v1::ImageService::NewStub(channel)),
      sessions_(::gpuaas::instance::v1::InstanceSessionService::NewStub(channel)),
      default_timeout_(default_timeout),
      tokens_(tokens) {}

absl::StatusOr<instancepb::Instance> InstanceClient::CreateInstance(
    const instancepb::CreateInstanceRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*instances_, &InstanceStub::CreateInstance, req, call,
                             default_timeout_, tokens_);
}

absl::StatusOr<instancepb::Instance> InstanceClient::GetInstance(
    const instancepb::GetInstanceRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*instances_, &InstanceStub::GetInstance, req, call, default_timeout_,
                             tokens_);
}

absl::StatusOr<instancepb::InstanceAccess> InstanceClient::GetInstanceAccess(
    const instancepb::GetInstanceAccessRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*instances_, &InstanceStub::GetInstanceAccess, req, call,
                             default_timeout_, tokens_);
}

absl::StatusOr<instancepb::InstanceMetrics> InstanceClient::GetInstanceMetrics(
    const instancepb::GetInstanceMetricsRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*instances_, &InstanceStub::GetInstanceMetrics, req, call,
                             default_timeout_, tokens_);
}

absl::StatusOr<instancepb::ListInstancesResponse> InstanceClient::ListInstances(
    const instancepb::ListInstancesRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*instances_, &InstanceStub::ListInstances, req, call, default_timeout_,
                             tokens_);
}

absl::StatusOr<instancepb::Instance> InstanceClient::StartInstance(
    const instancepb::StartInstanceRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*instances_, &InstanceStub::StartInstance, req, call, default_timeout_,
                             tokens_);
}

absl::StatusOr<instancepb::Instance> InstanceClient::StopInstance(
    const instancepb::StopInstanceRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*instances_, &InstanceStub::StopInstance, req, call, default_timeout_,
                             tokens_);
}

absl::StatusOr<instancepb::Instance> InstanceClient::DeleteInstance(
    const instancepb::DeleteInstanceRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*instances_, &InstanceStub::DeleteInstance, req, call,
                             default_timeout_, tokens_);
}

absl::StatusOr<instancepb::ListUsageResponse> InstanceClient::ListUsage(
    const instancepb::ListUsageRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*instances_, &InstanceStub::ListUsage, req, call, default_timeout_,
                             tokens_);
}

absl::StatusOr<instancepb::Image> InstanceClient::CreateImage(
    const instancepb::CreateImageRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*images_, &ImageStub::CreateImage, req, call, default_timeout_,
                             tokens_);
}

absl::StatusOr<instancepb::Image> InstanceClient::GetImage(const instancepb::GetImageRequest& req,
                                                           const CallContext& call) const {
  return internal::UnaryCall(*images_, &ImageStub::GetImage, req, call, default_timeout_, tokens_);
}

absl::StatusOr<instancepb::ListImagesResponse> InstanceClient::ListImages(
    const instancepb::ListImagesRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*images_, &ImageStub::ListImages, req, call, default_timeout_,
                             tokens_);
}

absl::StatusOr<instancepb::DeleteImageResponse> InstanceClient::DeleteImage(
    const instancepb::DeleteImageRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*images_, &ImageStub::DeleteImage, req, call, default_timeout_,
                             tokens_);
}

absl::Status InstanceClient::WatchInstances(
    const instancepb::WatchInstancesRequest& req,
    const std::function<bool(const instancepb::InstanceChange&)>& on_change,
    const CallContext& call) const {
  GPUAAS_ASSIGN_OR_RETURN(
      auto stream,
      internal::OpenServerStream(*instances_, &InstanceStub::WatchInstances, req, call, tokens_));
  return stream->ReadEach(on_change);
}

absl::Status InstanceClient::GetInstanceLogs(
    const instancepb::GetInstanceLogsRequest& req,
    const std::function<bool(const instancepb::LogChunk&)>& on_chunk,
    const CallContext& call) const {
  GPUAAS_ASSIGN_OR_RETURN(
      auto stream,
      internal::OpenServerStream(*instances_, &InstanceStub::GetInstanceLogs, req, call, tokens_));
  return stream->ReadEach(on_chunk);
}

ExecCall InstanceClient::OpenExec(const CallContext& call) const {
  ExecCall out;
  out.ctx = CallContext(call).set_timeout(absl::InfiniteDuration()).NewClientContext();
  out.stream = sessions_->ExecInstance(out.ctx.get());
  return out;
}

PortForwardCall InstanceClient::OpenPortForward(const CallContext& call) const {
  PortForwardCall out;
  out.ctx = CallContext(call).set_timeout(absl::InfiniteDuration()).NewClientContext();
  out.stream = sessions_->ForwardInstancePort(out.ctx.get());
  return out;
}

}  // namespace gpuaas::client
