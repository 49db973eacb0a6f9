#include "services/instance/node_workloads_grpc.h"

#include "libs/rpc/server_stream.h"

namespace gpuaas::instance {
namespace {

// A stream's place in the hub, given up when the stream ends.
class WatchSession final : public rpc::PushSession {
 public:
  WatchSession(NodeSetHub& hub, int64_t handle) : hub_(hub), handle_(handle) {}
  void OnEnd(const absl::Status&) override { hub_.Unsubscribe(handle_); }

 private:
  NodeSetHub& hub_;
  const int64_t handle_;
};

}  // namespace

grpc::ServerWriteReactor<pb::WorkloadSet>* NodeWorkloadServiceImpl::WatchWorkloads(
    grpc::CallbackServerContext* ctx, const pb::WatchWorkloadsRequest* req) {
  return handler_.RunServerStream<pb::WatchWorkloadsRequest, pb::WorkloadSet>(
      ctx, req,
      [this, peer_host = rpc::PeerAddress(*ctx)](
          const authz::Principal& p, const pb::WatchWorkloadsRequest& r,
          std::shared_ptr<rpc::StreamWriter<pb::WorkloadSet>> out)
          -> absl::StatusOr<std::unique_ptr<rpc::PushSession>> {
        if (absl::Status s = workloads_.OpenWatch(p, r, peer_host); !s.ok()) return s;
        const int64_t handle = hub_.Subscribe(r.node_id(), std::move(out));
        return std::make_unique<WatchSession>(hub_, handle);
      });
}

grpc::ServerUnaryReactor* NodeWorkloadServiceImpl::ReportWorkloads(
    grpc::CallbackServerContext* ctx, const pb::ReportWorkloadsRequest* req,
    pb::ReportWorkloadsResponse* resp) {
  return rpc::RunDomain(handler_, ctx, workloads_, &NodeWorkloads::ReportWorkloads, req, resp);
}

}  // namespace gpuaas::instance
