// The gRPC adapter of NodeWorkloadService: ReportWorkloads through the shared rpc::Handler,
// WatchWorkloads as a pushed server stream fed by the NodeSetHub.
#pragma once

#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "libs/rpc/handler.h"
#include "services/instance/node_workloads.h"
#include "services/instance/node_workloads_hub.h"

namespace gpuaas::instance {

class NodeWorkloadServiceImpl final : public pb::NodeWorkloadService::CallbackService {
 public:
  // Not owned; all outlive the server's streams.
  NodeWorkloadServiceImpl(NodeWorkloads& workloads, NodeSetHub& hub, rpc::Handler& handler)
      : workloads_(workloads), hub_(hub), handler_(handler) {}

  grpc::ServerWriteReactor<pb::WorkloadSet>* WatchWorkloads(
      grpc::CallbackServerContext* ctx, const pb::WatchWorkloadsRequest* req) override;
  grpc::ServerUnaryReactor* ReportWorkloads(grpc::CallbackServerContext* ctx,
                                            const pb::ReportWorkloadsRequest* req,
                                            pb::ReportWorkloadsResponse* resp) override;

 private:
  NodeWorkloads& workloads_;
  NodeSetHub& hub_;
  rpc::Handler& handler_;
};

}  // namespace gpuaas::instance
