// The stock service's node-facing API (gpuaas.stock.v1.NodeAgentService) for the node agents:
// RegisterNode, blocking, and the Heartbeat stream, driven on the caller's completion queue.
// Every call carries the agent's own token from `tokens` (none without); a token the service
// refuses is dropped, so the next call exchanges the API key again.
//
//   client::NodeAgentClient stock(channel, &tokens, absl::Seconds(5));
//   GPUAAS_ASSIGN_OR_RETURN(auto registered, stock.RegisterNode(req));
//   GPUAAS_ASSIGN_OR_RETURN(auto beat, stock.PrepareHeartbeat(cq));
//   beat->stream().StartCall(tag);
//
// Errors: the codes stock.proto documents for the RPC, with the server's message; UNAVAILABLE
// when the service cannot be reached or no token could be had; DEADLINE_EXCEEDED when the
// deadline passed; CANCELLED when the call's Cancellation was cancelled. Thread-safe.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/completion_queue.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "libs/client/access_tokens.h"
#include "libs/client/call_context.h"
#include "libs/client/cancellation.h"

namespace gpuaas::client {

namespace stockpb = ::gpuaas::stock::v1;

// One Heartbeat stream in flight on its caller's completion queue.
class HeartbeatCall final {
 public:
  using Stream =
      grpc::ClientAsyncReaderWriterInterface<stockpb::HeartbeatRequest, stockpb::HeartbeatResponse>;

  // Built by NodeAgentClient::PrepareHeartbeat only.
  HeartbeatCall(std::unique_ptr<grpc::ClientContext> ctx, Cancellation* cancellation,
                AccessTokens* tokens);

  // The stream, prepared but not started (StartCall first). Every tag goes to the completion
  // queue given to PrepareHeartbeat.
  Stream& stream() { return *stream_; }
  // Ends the stream early. Thread-safe, never blocks.
  void Cancel() { ctx_->TryCancel(); }
  // The stream's status as its Finish gave it, mapped to absl; a refused token is dropped.
  absl::Status Ended(const grpc::Status& status) const;

 private:
  friend class NodeAgentClient;
  std::unique_ptr<grpc::ClientContext> ctx_;
  CancelScope scope_;
  AccessTokens* const tokens_;
  std::unique_ptr<Stream> stream_;
};

class NodeAgentClient final {
 public:
  // `channel` from OpenChannel; `tokens` (may be null: no token is sent) must outlive the
  // client; `default_timeout` bounds RegisterNode unless its CallContext sets one. Does not
  // connect.
  NodeAgentClient(std::shared_ptr<grpc::ChannelInterface> channel, AccessTokens* tokens,
                  absl::Duration default_timeout = kDefaultTimeout);

  absl::StatusOr<stockpb::RegisterNodeResponse> RegisterNode(
      const stockpb::RegisterNodeRequest& req, const CallContext& call = {}) const;

  // A Heartbeat stream on `cq`, prepared, not started; no deadline unless `call` sets one
  // (the stream lives as long as the agent). Blocks only for a token exchange. Errors:
  // UNAVAILABLE when no token could be had.
  absl::StatusOr<std::unique_ptr<HeartbeatCall>> PrepareHeartbeat(
      grpc::CompletionQueue& cq, const CallContext& call = {}) const;

  // True when the token the open stream was started with is due for refresh: reopen it.
  bool TokenRefreshDue() const { return tokens_ != nullptr && tokens_->RefreshDue(); }

 private:
  using Stub = ::gpuaas::stock::v1::NodeAgentService::StubInterface;

  std::unique_ptr<Stub> stub_;
  AccessTokens* const tokens_;
  const absl::Duration default_timeout_;
};

}  // namespace gpuaas::client
