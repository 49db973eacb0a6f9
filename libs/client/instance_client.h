// The instance service (gpuaas.instance.v1.InstanceService and ImageService) for the other
// gpuaas binaries and the CLI: one method per RPC, named as in instance.proto, each blocking
// until the answer or the call's deadline; WatchInstances calls back per change until the
// stream ends. gpuaasctl drives instances and images through it.
//
// Every method: the request as in instance.proto, `call` for the deadline, the bearer token and
// the incoming call to follow (call_context.h); a call without a bearer token carries the
// service's own from `tokens` when the client has one (the proxy's route watch). Errors: the codes
// instance.proto documents for the RPC, with the server's message; UNAUTHENTICATED without a valid
// token; UNAVAILABLE when the service cannot be reached or is overloaded; DEADLINE_EXCEEDED when
// the deadline passed. Thread-safe: one client serves every thread.
#pragma once

#include <grpcpp/channel.h>

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "libs/client/access_tokens.h"
#include "libs/client/call_context.h"
#include "libs/client/server_stream.h"

namespace gpuaas::client {

namespace instancepb = ::gpuaas::instance::v1;

// One open full-duplex session call (ExecInstance, ForwardInstancePort): its context (cancel
// with ctx->TryCancel()) and its stream. The caller drives it: Write from one thread, Read from
// another, Finish once both are done.
template <class Req, class Resp>
struct DuplexCall {
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientReaderWriterInterface<Req, Resp>> stream;
};
using ExecCall = DuplexCall<instancepb::ExecInstanceRequest, instancepb::ExecInstanceResponse>;
using PortForwardCall =
    DuplexCall<instancepb::ForwardInstancePortRequest, instancepb::ForwardInstancePortResponse>;

class InstanceClient final {
 public:
  // `channel` from OpenChannel; `default_timeout` bounds every unary call whose CallContext
  // sets none; `tokens` (may be null; must outlive the client) gives calls without a bearer
  // token the service's own. Does not connect.
  explicit InstanceClient(std::shared_ptr<grpc::ChannelInterface> channel,
                          absl::Duration default_timeout = kDefaultTimeout,
                          AccessTokens* tokens = nullptr);

  absl::StatusOr<instancepb::Instance> CreateInstance(const instancepb::CreateInstanceRequest& req,
                                                      const CallContext& call = {}) const;
  absl::StatusOr<instancepb::Instance> GetInstance(const instancepb::GetInstanceRequest& req,
                                                   const CallContext& call = {}) const;
  absl::StatusOr<instancepb::ListInstancesResponse> ListInstances(
      const instancepb::ListInstancesRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<instancepb::Instance> StartInstance(const instancepb::StartInstanceRequest& req,
                                                     const CallContext& call = {}) const;
  absl::StatusOr<instancepb::Instance> StopInstance(const instancepb::StopInstanceRequest& req,
                                                    const CallContext& call = {}) const;
  absl::StatusOr<instancepb::Instance> DeleteInstance(const instancepb::DeleteInstanceRequest& req,
                                                      const CallContext& call = {}) const;
  absl::StatusOr<instancepb::InstanceAccess> GetInstanceAccess(
      const instancepb::GetInstanceAccessRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<instancepb::InstanceMetrics> GetInstanceMetrics(
      const instancepb::GetInstanceMetricsRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<instancepb::ListUsageResponse> ListUsage(const instancepb::ListUsageRequest& req,
                                                          const CallContext& call = {}) const;
  absl::StatusOr<instancepb::Image> CreateImage(const instancepb::CreateImageRequest& req,
                                                const CallContext& call = {}) const;
  absl::StatusOr<instancepb::Image> GetImage(const instancepb::GetImageRequest& req,
                                             const CallContext& call = {}) const;
  absl::StatusOr<instancepb::ListImagesResponse> ListImages(
      const instancepb::ListImagesRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<instancepb::DeleteImageResponse> DeleteImage(
      const instancepb::DeleteImageRequest& req, const CallContext& call = {}) const;

  // Streams changes to `on_change` until it returns false (then OK), the stream ends (its
  // status), or the call's deadline passes (none unless `call` sets one: a watch is long).
  absl::Status WatchInstances(
      const instancepb::WatchInstancesRequest& req,
      const std::function<bool(const instancepb::InstanceChange&)>& on_change,
      const CallContext& call = {}) const;

  // True when the service token (from `tokens`) is due for refresh: a long stream opened with
  // it should be reopened. False without `tokens`.
  bool TokenRefreshDue() const { return tokens_ != nullptr && tokens_->RefreshDue(); }

  // Streams the instance's log chunks to `on_chunk` until it returns false (then OK), the
  // stream ends (OK after a tail, or when a followed workload ended; else its status), or the
  // call's deadline passes (none unless `call` sets one: a follow is long).
  absl::Status GetInstanceLogs(const instancepb::GetInstanceLogsRequest& req,
                               const std::function<bool(const instancepb::LogChunk&)>& on_chunk,
                               const CallContext& call = {}) const;

  // Opens a terminal or port-forward session with `call`'s token and no deadline (a session
  // is as long as its user wants). Never blocks; errors come from the stream.
  ExecCall OpenExec(const CallContext& call) const;
  PortForwardCall OpenPortForward(const CallContext& call) const;

 private:
  using SessionStub = ::gpuaas::instance::v1::InstanceSessionService::StubInterface;
  using InstanceStub = ::gpuaas::instance::v1::InstanceService::StubInterface;
  using ImageStub = ::gpuaas::instance::v1::ImageService::StubInterface;

  std::unique_ptr<InstanceStub> instances_;
  std::unique_ptr<ImageStub> images_;
  std::unique_ptr<SessionStub> sessions_;
  absl::Duration default_timeout_;
  AccessTokens* tokens_;
};

}  // namespace gpuaas::client
