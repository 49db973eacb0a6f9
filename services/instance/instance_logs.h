// GetInstanceLogs: a workload's output, read from its node's agent (instance_logs_relay.h).
// The run read is the current one, or the last one that reached a node
// (instance.instances.log_node_id / log_run, 0004_workload_logs.sql), whose directory its agent
// keeps for --keep-finished after it ended.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/authz/principal.h"
#include "libs/common/slot_limiter.h"
#include "libs/db/db.h"
#include "libs/rpc/pull_stream.h"
#include "services/instance/instance_logs_relay.h"

namespace gpuaas::instance {

class InstanceLogs final {
 public:
  // `pool` and `agents` must outlive this object. At most `max_streams` log streams are open
  // at once (each holds a thread while it relays), and `max_streams_per_tenant` of one tenant's
  // instances, so one tenant cannot take the pool from the others.
  InstanceLogs(db::Pool& pool, AgentLogClient& agents, int max_streams = 256,
               int max_streams_per_tenant = 32)
      : pool_(pool),
        agents_(agents),
        streams_(max_streams, max_streams_per_tenant, "log streams", "tenant") {}

  // Opens the stream. Every role of the instance's tenant may read (Power::kRead). Errors:
  // INVALID_ARGUMENT naming instance_id, tail_lines or stream; NOT_FOUND for a missing,
  // deleted or other tenant's instance; FAILED_PRECONDITION when no run of it reached a node
  // yet; UNAVAILABLE when its node's agent serves no logs or no service token is to be had;
  // RESOURCE_EXHAUSTED at max_streams or max_streams_per_tenant. The stream itself ends NOT_FOUND
  // when the node no longer keeps the run's files, UNAVAILABLE when the agent cannot be reached.
  // Blocks on PostgreSQL (and a token exchange).
  absl::StatusOr<rpc::PullSourcePtr<v1::LogChunk>> Open(const authz::Principal& p,
                                                        const v1::GetInstanceLogsRequest& req,
                                                        const grpc::ServerContextBase& incoming);

 private:
  db::Pool& pool_;
  AgentLogClient& agents_;
  SlotLimiter streams_;
};

}  // namespace gpuaas::instance
