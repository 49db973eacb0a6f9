// The agent's side of workload logs (WorkloadLogService in workload_logs.proto): the instance
// service asks for a workload's last lines and, with `follow`, for what it writes next, read
// from the capped files its shim keeps in the workload's directory (log_cursor.h). A follow
// wakes on inotify (with a half-second poll beside it, for a workload whose end no file shows)
// and ends once the workload has finished and its files are drained, or when the caller goes.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gpuaas/instance/v1/workload_logs.grpc.pb.h"
#include "libs/authz/principal.h"
#include "libs/common/slot_limiter.h"
#include "libs/rpc/handler.h"
#include "libs/rpc/pull_stream.h"

namespace gpuaas::agent {

struct WorkloadLogsOptions {
  // This node's id: only tokens minted for its agent's logs are served (authz/node_calls.h).
  std::string node_id;
  // The runtime's root: one directory per workload id.
  std::string root;
  // Whether the workload has finished (so its logs are complete once read); true for one the
  // runtime does not know. Called from the streams' threads; must be thread-safe.
  std::function<bool(const std::string& workload_id)> finished;
  // Streams open at once (a thread each), in all and for one instance's workloads; more are
  // refused RESOURCE_EXHAUSTED.
  int max_streams = 64;
  int max_streams_per_instance = 8;
};

class WorkloadLogs final {
 public:
  explicit WorkloadLogs(WorkloadLogsOptions options);

  // Opens a ReadWorkloadLogs stream. Errors: PERMISSION_DENIED unless `p` is a token minted
  // for this node's workload logs (authz::RequireAgentCall); INVALID_ARGUMENT naming tail_lines,
  // stream or workload_id; NOT_FOUND for a workload this node has no directory for;
  // RESOURCE_EXHAUSTED when max_streams are open, or max_streams_per_instance of the workload's
  // instance. Reads the files' ends; does not wait.
  absl::StatusOr<rpc::PullSourcePtr<instance::v1::LogChunk>> Open(
      const authz::Principal& p, const instance::v1::ReadWorkloadLogsRequest& req);

 private:
  const WorkloadLogsOptions options_;
  SlotLimiter streams_;
};

// The gRPC face: ReadWorkloadLogs on the agent's server.
class WorkloadLogServiceImpl final : public instance::v1::WorkloadLogService::CallbackService {
 public:
  WorkloadLogServiceImpl(WorkloadLogs& logs, rpc::Handler& handler)
      : logs_(logs), handler_(handler) {}

  grpc::ServerWriteReactor<instance::v1::LogChunk>* ReadWorkloadLogs(
      grpc::CallbackServerContext* ctx, const instance::v1::ReadWorkloadLogsRequest* req) override;

 private:
  WorkloadLogs& logs_;
  rpc::Handler& handler_;
};

}  // namespace gpuaas::agent
