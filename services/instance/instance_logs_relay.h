// The instance service's side of a workload's log stream: ReadWorkloadLogs on the node's agent
// (client::WorkloadLogClient, with a token minted for that node's logs only), its chunks relayed
// one at a time
// (rpc::PullSource), so a slow reader slows the agent's reading rather than filling a queue.
// The call's deadline and cancellation follow the incoming GetInstanceLogs.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gpuaas/instance/v1/workload_logs.grpc.pb.h"
#include "libs/client/node_tokens.h"
#include "libs/client/workload_log_client.h"
#include "libs/rpc/pull_stream.h"

namespace gpuaas::instance {

class AgentLogClient final {
 public:
  // A channel to an agent ("host:port"), with the service's TLS settings.
  using ChannelFactory = client::WorkloadLogClient::ChannelFactory;

  // `tokens` must outlive this object.
  AgentLogClient(ChannelFactory open_channel, client::NodeTokens& tokens)
      : agents_(std::move(open_channel), tokens) {}

  // Starts ReadWorkloadLogs on node `node_id`'s agent at `agent_address`. The stream's errors
  // come from Next: the agent's NOT_FOUND as NOT_FOUND (the run's logs are gone), UNAVAILABLE
  // when the agent cannot be reached or refuses the token. Blocks only for minting a token.
  // Errors: UNAVAILABLE when no token or channel could be had.
  absl::StatusOr<rpc::PullSourcePtr<v1::LogChunk>> Open(const std::string& node_id,
                                                        const std::string& agent_address,
                                                        const v1::ReadWorkloadLogsRequest& req,
                                                        const grpc::ServerContextBase& incoming);

 private:
  client::WorkloadLogClient agents_;
};

}  // namespace gpuaas::instance
