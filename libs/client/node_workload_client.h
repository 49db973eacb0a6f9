// The instance service's node-facing API (gpuaas.instance.v1.NodeWorkloadService) for the node
// agents: WatchWorkloads, the node's desired workload set on connect and after every change,
// and ReportWorkloads. Every call carries the agent's own token from `tokens` (none without); a
// token the service refuses is dropped, so the next call exchanges the API key again.
//
//   client::NodeWorkloadClient instances(channel, &tokens, absl::Seconds(5));
//   absl::Status ended = instances.WatchWorkloads(req, [&](const WorkloadSet& set) {
//     Converge(set);
//     return true;
//   }, client::CallContext().set_cancellation(cancel));
//
// Errors: the codes instance.proto documents for the RPC, with the server's message;
// UNAVAILABLE when the service cannot be reached or no token could be had; DEADLINE_EXCEEDED
// when the deadline passed; CANCELLED when the call's Cancellation was cancelled. Thread-safe.
#pragma once

#include <grpcpp/channel.h>

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "libs/client/access_tokens.h"
#include "libs/client/call_context.h"

namespace gpuaas::client {

namespace instancepb = ::gpuaas::instance::v1;

class NodeWorkloadClient final {
 public:
  // `channel` from OpenChannel; `tokens` (may be null: no token is sent) must outlive the
  // client; `default_timeout` bounds ReportWorkloads unless its CallContext sets one. Does not
  // connect.
  NodeWorkloadClient(std::shared_ptr<grpc::ChannelInterface> channel, AccessTokens* tokens,
                     absl::Duration default_timeout = kDefaultTimeout);

  // Streams the node's sets to `on_set` until it returns false (then OK), the stream ends (its
  // status), or the call's deadline passes (none unless `call` sets one: a watch is long).
  absl::Status WatchWorkloads(const instancepb::WatchWorkloadsRequest& req,
                              const std::function<bool(const instancepb::WorkloadSet&)>& on_set,
                              const CallContext& call = {}) const;

  absl::StatusOr<instancepb::ReportWorkloadsResponse> ReportWorkloads(
      const instancepb::ReportWorkloadsRequest& req, const CallContext& call = {}) const;

 private:
  using Stub = ::gpuaas::instance::v1::NodeWorkloadService::StubInterface;

  std::unique_ptr<Stub> stub_;
  AccessTokens* const tokens_;
  const absl::Duration default_timeout_;
};

}  // namespace gpuaas::client
