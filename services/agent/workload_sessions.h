// The agent's side of terminals and port-forwards (WorkloadSessionService in
// workload_sessions.proto): the instance service relays a tenant's ExecInstance or
// ForwardInstancePort here, naming the run, with a token minted for this node and that one
// call. A command runs inside the workload's container (container_exec.h); a forwarded
// connection is made inside its network namespace (netns_dial.h). Nothing here runs on the
// node outside a workload's own confinement.
//
// Both are full-duplex byte streams that people hold open for hours, so they use gRPC's
// synchronous API: a session holds its handler thread (reading the caller) and one thread of
// its own (reading the command or connection), both capped (`max_sessions`).
#pragma once

#include <functional>
#include <string>

#include "gpuaas/instance/v1/workload_sessions.grpc.pb.h"
#include "libs/common/slot_limiter.h"
#include "libs/rpc/handler.h"

namespace gpuaas::agent {

struct WorkloadSessionsOptions {
  // This node's id: only tokens minted for its agent and the call are served.
  std::string node_id;
  // The runtime's root: one directory per workload id (its netns, its runc state's name).
  std::string root;
  std::string runc_path = "/usr/sbin/runc";
  // Whether the workload is a container that runs now. Thread-safe.
  std::function<bool(const std::string& workload_id)> running;
  // Sessions open at once, in all and for one instance's workloads; more are refused
  // RESOURCE_EXHAUSTED. Each holds two threads.
  int max_sessions = 32;
  int max_sessions_per_instance = 8;
};

class WorkloadSessionServiceImpl final : public instance::v1::WorkloadSessionService::Service {
 public:
  // `handler` authenticates (this node's audience); it must outlive this object.
  WorkloadSessionServiceImpl(WorkloadSessionsOptions options, rpc::Handler& handler);

  grpc::Status ExecWorkload(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<instance::v1::ExecWorkloadResponse,
                               instance::v1::ExecWorkloadRequest>* stream) override;
  grpc::Status ForwardWorkloadPort(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<instance::v1::ForwardWorkloadPortResponse,
                               instance::v1::ForwardWorkloadPortRequest>* stream) override;

 private:
  // The caller may open a session of `purpose` on `workload_id`: its token, the workload (a
  // running container of this node), a free slot.
  absl::StatusOr<SlotLimiter::Slot> Admit(grpc::ServerContext& ctx, std::string_view purpose,
                                          const std::string& workload_id);

  const WorkloadSessionsOptions options_;
  rpc::Handler& handler_;
  SlotLimiter sessions_;
};

}  // namespace gpuaas::agent
