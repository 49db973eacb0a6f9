// The gRPC face of InstanceService and ImageService: one line per method into Instances (and
// InstanceWatches for the stream) on the handler's pool.
#pragma once

#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "libs/rpc/handler.h"
#include "services/instance/access.h"
#include "services/instance/instance_logs.h"
#include "services/instance/instance_metrics.h"
#include "services/instance/instance_watches.h"
#include "services/instance/instances.h"

namespace gpuaas::instance {

class InstanceServiceImpl final : public pb::InstanceService::CallbackService {
 public:
  InstanceServiceImpl(Instances& instances, InstanceWatches& watches, Access& access,
                      InstanceMetricsReader& metrics, InstanceLogs& logs, rpc::Handler& handler)
      : instances_(instances),
        watches_(watches),
        access_(access),
        metrics_(metrics),
        logs_(logs),
        handler_(handler) {}

  grpc::ServerUnaryReactor* CreateInstance(grpc::CallbackServerContext* ctx,
                                           const pb::CreateInstanceRequest* req,
                                           pb::Instance* resp) override;
  grpc::ServerUnaryReactor* GetInstance(grpc::CallbackServerContext* ctx,
                                        const pb::GetInstanceRequest* req,
                                        pb::Instance* resp) override;
  grpc::ServerUnaryReactor* ListInstances(grpc::CallbackServerContext* ctx,
                                          const pb::ListInstancesRequest* req,
                                          pb::ListInstancesResponse* resp) override;
  grpc::ServerUnaryReactor* StartInstance(grpc::CallbackServerContext* ctx,
                                          const pb::StartInstanceRequest* req,
                                          pb::Instance* resp) override;
  grpc::ServerUnaryReactor* StopInstance(grpc::CallbackServerContext* ctx,
                                         const pb::StopInstanceRequest* req,
                                         pb::Instance* resp) override;
  grpc::ServerUnaryReactor* DeleteInstance(grpc::CallbackServerContext* ctx,
                                           const pb::DeleteInstanceRequest* req,
                                           pb::Instance* resp) override;
  grpc::ServerUnaryReactor* ListUsage(grpc::CallbackServerContext* ctx,
                                      const pb::ListUsageRequest* req,
                                      pb::ListUsageResponse* resp) override;
  grpc::ServerWriteReactor<pb::InstanceChange>* WatchInstances(
      grpc::CallbackServerContext* ctx, const pb::WatchInstancesRequest* req) override;
  grpc::ServerUnaryReactor* GetInstanceAccess(grpc::CallbackServerContext* ctx,
                                              const pb::GetInstanceAccessRequest* req,
                                              pb::InstanceAccess* resp) override;
  grpc::ServerUnaryReactor* GetInstanceMetrics(grpc::CallbackServerContext* ctx,
                                               const pb::GetInstanceMetricsRequest* req,
                                               pb::InstanceMetrics* resp) override;
  grpc::ServerWriteReactor<pb::LogChunk>* GetInstanceLogs(
      grpc::CallbackServerContext* ctx, const pb::GetInstanceLogsRequest* req) override;

 private:
  Instances& instances_;
  InstanceWatches& watches_;
  Access& access_;
  InstanceMetricsReader& metrics_;
  InstanceLogs& logs_;
  rpc::Handler& handler_;
};

class AccessServiceImpl final : public pb::AccessService::CallbackService {
 public:
  AccessServiceImpl(Access& access, rpc::Handler& handler) : access_(access), handler_(handler) {}

  grpc::ServerUnaryReactor* RedeemAccessCode(grpc::CallbackServerContext* ctx,
                                             const pb::RedeemAccessCodeRequest* req,
                                             pb::AccessGrant* resp) override;
  grpc::ServerUnaryReactor* CheckAccessGrant(grpc::CallbackServerContext* ctx,
                                             const pb::CheckAccessGrantRequest* req,
                                             pb::AccessGrant* resp) override;
  grpc::ServerUnaryReactor* ReportAccess(grpc::CallbackServerContext* ctx,
                                         const pb::ReportAccessRequest* req,
                                         pb::ReportAccessResponse* resp) override;
  grpc::ServerUnaryReactor* GetProxyToken(grpc::CallbackServerContext* ctx,
                                          const pb::GetProxyTokenRequest* req,
                                          pb::ProxyToken* resp) override;

 private:
  Access& access_;
  rpc::Handler& handler_;
};

class ImageServiceImpl final : public pb::ImageService::CallbackService {
 public:
  ImageServiceImpl(Images& images, rpc::Handler& handler) : images_(images), handler_(handler) {}

  grpc::ServerUnaryReactor* CreateImage(grpc::CallbackServerContext* ctx,
                                        const pb::CreateImageRequest* req,
                                        pb::Image* resp) override;
  grpc::ServerUnaryReactor* GetImage(grpc::CallbackServerContext* ctx,
                                     const pb::GetImageRequest* req, pb::Image* resp) override;
  grpc::ServerUnaryReactor* ListImages(grpc::CallbackServerContext* ctx,
                                       const pb::ListImagesRequest* req,
                                       pb::ListImagesResponse* resp) override;
  grpc::ServerUnaryReactor* DeleteImage(grpc::CallbackServerContext* ctx,
                                        const pb::DeleteImageRequest* req,
                                        pb::DeleteImageResponse* resp) override;

 private:
  Images& images_;
  rpc::Handler& handler_;
};

}  // namespace gpuaas::instance
