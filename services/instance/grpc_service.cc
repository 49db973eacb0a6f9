#include "services/instance/grpc_service.h"

#include "libs/client/call_context.h"
#include "libs/rpc/pull_stream.h"
#include "libs/rpc/server_stream.h"
#include "services/instance/secret_envs.h"

namespace gpuaas::instance {
namespace {

// rpc::RunDomain and rpc::RunAsCaller for the methods that answer instances or images: a secret
// environment value leaves in no answer (secret_envs.h), whatever the method did.
template <class Domain, class Req, class Resp>
grpc::ServerUnaryReactor* RunHiding(rpc::Handler& handler, grpc::CallbackServerContext* ctx,
                                    Domain& domain,
                                    absl::Status (Domain::*method)(const authz::Principal&,
                                                                   const Req&, Resp&),
                                    const Req* req, Resp* resp) {
  return handler.Run(ctx, [&domain, method, req, resp](const authz::Principal& p) {
    absl::Status s = (domain.*method)(p, *req, *resp);
    HideSecretEnvs(*resp);
    return s;
  });
}

template <class Domain, class Req, class Resp>
grpc::ServerUnaryReactor* RunHiding(rpc::Handler& handler, grpc::CallbackServerContext* ctx,
                                    Domain& domain,
                                    absl::Status (Domain::*method)(const authz::Principal&,
                                                                   const client::CallerCredentials&,
                                                                   const Req&, Resp&),
                                    const Req* req, Resp* resp) {
  return handler.Run(
      ctx, [&domain, method, req, resp,
            caller = client::CallerCredentials::FromIncoming(*ctx)](const authz::Principal& p) {
        absl::Status s = (domain.*method)(p, caller, *req, *resp);
        HideSecretEnvs(*resp);
        return s;
      });
}

}  // namespace
grpc::ServerUnaryReactor* InstanceServiceImpl::CreateInstance(grpc::CallbackServerContext* ctx,
                                                              const pb::CreateInstanceRequest* req,
                                                              pb::Instance* resp) {
  return RunHiding(handler_, ctx, instances_, &Instances::CreateInstance, req, resp);
}

grpc::ServerUnaryReactor* InstanceServiceImpl::GetInstance(grpc::CallbackServerContext* ctx,
                                                           const pb::GetInstanceRequest* req,
                                                           pb::Instance* resp) {
  return RunHiding(handler_, ctx, instances_, &Instances::GetInstance, req, resp);
}

grpc::ServerUnaryReactor* InstanceServiceImpl::ListInstances(grpc::CallbackServerContext* ctx,
                                                             const pb::ListInstancesRequest* req,
                                                             pb::ListInstancesResponse* resp) {
  return RunHiding(handler_, ctx, instances_, &Instances::ListInstances, req, resp);
}

grpc::ServerUnaryReactor* InstanceServiceImpl::StartInstance(grpc::CallbackServerContext* ctx,
                                                             const pb::StartInstanceRequest* req,
                                                             pb::Instance* resp) {
  return RunHiding(handler_, ctx, instances_, &Instances::StartInstance, req, resp);
}

grpc::ServerUnaryReactor* InstanceServiceImpl::StopInstance(grpc::CallbackServerContext* ctx,
                                                            const pb::StopInstanceRequest* req,
                                                            pb::Instance* resp) {
  return RunHiding(handler_, ctx, instances_, &Instances::StopInstance, req, resp);
}

grpc::ServerUnaryReactor* InstanceServiceImpl::DeleteInstance(grpc::CallbackServerContext* ctx,
                                                              const pb::DeleteInstanceRequest* req,
                                                              pb::Instance* resp) {
  return RunHiding(handler_, ctx, instances_, &Instances::DeleteInstance, req, resp);
}

grpc::ServerUnaryReactor* InstanceServiceImpl::ListUsage(grpc::CallbackServerContext* ctx,
                                                         const pb::ListUsageRequest* req,
                                                         pb::ListUsageResponse* resp) {
  return rpc::RunDomain(handler_, ctx, instances_, &Instances::ListUsage, req, resp);
}

grpc::ServerWriteReactor<pb::InstanceChange>* InstanceServiceImpl::WatchInstances(
    grpc::CallbackServerContext* ctx, const pb::WatchInstancesRequest* req) {
  return handler_.RunServerStream<pb::WatchInstancesRequest, pb::InstanceChange>(
      ctx, req,
      [this](const authz::Principal& p, const pb::WatchInstancesRequest& r,
             std::shared_ptr<rpc::StreamWriter<pb::InstanceChange>> out) {
        return watches_.Open(p, r, std::move(out));
      });
}

grpc::ServerWriteReactor<pb::LogChunk>* InstanceServiceImpl::GetInstanceLogs(
    grpc::CallbackServerContext* ctx, const pb::GetInstanceLogsRequest* req) {
  return rpc::RunPullStream<pb::GetInstanceLogsRequest, pb::LogChunk>(
      handler_, ctx, req,
      [this](const authz::Principal& p, const pb::GetInstanceLogsRequest& r,
             grpc::CallbackServerContext& c) -> absl::StatusOr<rpc::PullSourcePtr<pb::LogChunk>> {
        return logs_.Open(p, r, c);
      });
}

grpc::ServerUnaryReactor* ImageServiceImpl::CreateImage(grpc::CallbackServerContext* ctx,
                                                        const pb::CreateImageRequest* req,
                                                        pb::Image* resp) {
  return RunHiding(handler_, ctx, images_, &Images::CreateImage, req, resp);
}

grpc::ServerUnaryReactor* ImageServiceImpl::GetImage(grpc::CallbackServerContext* ctx,
                                                     const pb::GetImageRequest* req,
                                                     pb::Image* resp) {
  return RunHiding(handler_, ctx, images_, &Images::GetImage, req, resp);
}

grpc::ServerUnaryReactor* ImageServiceImpl::ListImages(grpc::CallbackServerContext* ctx,
                                                       const pb::ListImagesRequest* req,
                                                       pb::ListImagesResponse* resp) {
  return RunHiding(handler_, ctx, images_, &Images::ListImages, req, resp);
}

grpc::ServerUnaryReactor* ImageServiceImpl::DeleteImage(grpc::CallbackServerContext* ctx,
                                                        const pb::DeleteImageRequest* req,
                                                        pb::DeleteImageResponse* resp) {
  return RunHiding(handler_, ctx, images_, &Images::DeleteImage, req, resp);
}

grpc::ServerUnaryReactor* InstanceServiceImpl::GetInstanceAccess(
    grpc::CallbackServerContext* ctx, const pb::GetInstanceAccessRequest* req,
    pb::InstanceAccess* resp) {
  return rpc::RunDomain(handler_, ctx, access_, &Access::GetInstanceAccess, req, resp);
}

grpc::ServerUnaryReactor* InstanceServiceImpl::GetInstanceMetrics(
    grpc::CallbackServerContext* ctx, const pb::GetInstanceMetricsRequest* req,
    pb::InstanceMetrics* resp) {
  return rpc::RunAsCaller(handler_, ctx, metrics_, &InstanceMetricsReader::GetInstanceMetrics, req,
                          resp);
}

grpc::ServerUnaryReactor* AccessServiceImpl::RedeemAccessCode(
    grpc::CallbackServerContext* ctx, const pb::RedeemAccessCodeRequest* req,
    pb::AccessGrant* resp) {
  return rpc::RunDomain(handler_, ctx, access_, &Access::RedeemAccessCode, req, resp);
}

grpc::ServerUnaryReactor* AccessServiceImpl::CheckAccessGrant(
    grpc::CallbackServerContext* ctx, const pb::CheckAccessGrantRequest* req,
    pb::AccessGrant* resp) {
  return rpc::RunAsCaller(handler_, ctx, access_, &Access::CheckAccessGrant, req, resp);
}

grpc::ServerUnaryReactor* AccessServiceImpl::ReportAccess(grpc::CallbackServerContext* ctx,
                                                          const pb::ReportAccessRequest* req,
                                                          pb::ReportAccessResponse* resp) {
  return rpc::RunDomain(handler_, ctx, access_, &Access::ReportAccess, req, resp);
}

grpc::ServerUnaryReactor* AccessServiceImpl::GetProxyToken(grpc::CallbackServerContext* ctx,
                                                           const pb::GetProxyTokenRequest* req,
                                                           pb::ProxyToken* resp) {
  return rpc::RunDomain(handler_, ctx, access_, &Access::GetProxyToken, req, resp);
}

}  // namespace gpuaas::instance
