// GetInstanceLogs: a workload's output, read from its node's agent (instance_logs_relay.h).
// The run read is the current one, or the last one that reached a node
// (instance.instances.log_node_id / log_run, 0004_workload_logs.sql), whose directory its agent
// keeps for --keep-finished after it ended.
#pragma once

#include <atomic>
#include <memory>

#include "absl/status/statusor.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/authz/principal.h"
#include "libs/db/db.h"
#include "libs/rpc/pull_stream.h"
#include "services/instance/instance_logs_relay.h"

namespace gpuaas::instance {

class InstanceLogs final {
 public:
  // `pool` and `agents` must outlive this object. At most `max_streams` log streams are open
  // at once (each holds a thread while it relays).
  InstanceLogs(db::Pool& pool, AgentLogClient& agents, int max_streams = 256)
      : pool_(pool), agents_(agents), max_streams_(max_streams) {}

  // Opens the stream. Every role of the instance's tenant may read (Power::kRead). Errors:
  // INVALID_ARGUMENT naming instance_id, tail_lines or stream; NOT_FOUND for a missing,
  // deleted or other tenant's instance; FAILED_PRECONDITION when no run of it reached a node
  // yet; UNAVAILABLE when its node's agent serves no logs or no service token is to be had;
  // RESOURCE_EXHAUSTED at max_streams. The stream itself ends NOT_FOUND when the node no
  // longer keeps the run's files, UNAVAILABLE when the agent cannot be reached. Blocks on
  // PostgreSQL (and a token exchange).
  absl::StatusOr<rpc::PullSourcePtr<v1::LogChunk>> Open(const authz::Principal& p,
                                                        const v1::GetInstanceLogsRequest& req,
                                                        const grpc::ServerContextBase& incoming);

 private:
  db::Pool& pool_;
  AgentLogClient& agents_;
  const int max_streams_;
  std::shared_ptr<std::atomic<int>> open_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace gpuaas::instance
