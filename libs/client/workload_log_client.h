// The node agents' WorkloadLogService (workload_logs.proto) for the instance service: a
// workload's log stream, read from whichever agent runs it. One channel per agent address,
// opened on first use and kept (a node's address changes rarely, and nodes are few). Every
// call carries a token minted for that node's agent and that call only (node_tokens.h), never
// the service's own: whatever answers on the address may keep it (issue 32). A token the agent
// refuses is dropped, so the next call mints again. Thread-safe.
#pragma once

#include <grpcpp/channel.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gpuaas/instance/v1/workload_logs.grpc.pb.h"
#include "libs/client/agent_stubs.h"
#include "libs/client/call_context.h"
#include "libs/client/node_tokens.h"
#include "libs/client/server_stream.h"

namespace gpuaas::client {

namespace instancepb = ::gpuaas::instance::v1;

class WorkloadLogClient final {
 public:
  // A channel to an agent ("host:port"), with the service's TLS settings.
  using ChannelFactory = AgentChannelFactory;

  // `tokens` must outlive the client.
  WorkloadLogClient(ChannelFactory open_channel, NodeTokens& tokens)
      : stubs_(std::move(open_channel)), tokens_(tokens) {}

  // Starts ReadWorkloadLogs on node `node_id`'s agent at `agent_address`, with `call`'s
  // deadline (none unless it sets one) and cancellation. The stream's own errors come from it:
  // the agent's codes, UNAVAILABLE when it cannot be reached. Blocks only for minting a token.
  // Errors: UNAVAILABLE when no token or no channel could be had.
  absl::StatusOr<ServerStreamPtr<instancepb::LogChunk>> OpenReadWorkloadLogs(
      const std::string& node_id, const std::string& agent_address,
      const instancepb::ReadWorkloadLogsRequest& req, const CallContext& call);

  // The agent of `node_id` refused the token its stream was opened with: the next call mints
  // another.
  void TokenRefused(const std::string& node_id);

 private:
  using Stub = instancepb::WorkloadLogService::StubInterface;

  AgentStubs<instancepb::WorkloadLogService> stubs_;
  NodeTokens& tokens_;
};

}  // namespace gpuaas::client
