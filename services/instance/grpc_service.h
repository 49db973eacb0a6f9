// The gRPC face of InstanceService and ImageService: one line per method into Instances (and
// InstanceWatches for the stream) on the handler's pool.
#pragma once

#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "libs/rpc/handler.h"
#include "services/instance/instance_logs.h"
#include "services/instance/instance_watches.h"
#include "services/instance/instances.h"

namespace gpuaas::instance {

class InstanceServiceImpl final : public pb::InstanceService::CallbackService {
 public:
  // `logs` may be null: GetInstanceLogs is then UNIMPLEMENTED.
  InstanceServiceImpl(Instances& instances, InstanceWatches& watches, rpc::Handler& handler,
                      InstanceLogs* logs = nullptr)
      : instances_(instances), watches_(watches), handler_(handler), logs_(logs) {}

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
  grpc::ServerWriteReactor<pb::LogChunk>* GetInstanceLogs(
      grpc::CallbackServerContext* ctx, const pb::GetInstanceLogsRequest* req) override;

 private:
  Instances& instances_;
  InstanceWatches& watches_;
  rpc::Handler& handler_;
  InstanceLogs* logs_;
};

class ImageServiceImpl final : public pb::ImageService::CallbackService {
 public:
  ImageServiceImpl(Instances& instances, rpc::Handler& handler)
      : instances_(instances), handler_(handler) {}

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
  Instances& instances_;
  rpc::Handler& handler_;
};

}  // namespace gpuaas::instance
