// The storage service's node-facing API (gpuaas.storage.v1.NodeStorageService) for the node
// agents: the keys of their Ceph storages' mounts (issue 33). Every call carries the agent's own
// token from `tokens` (none without); a token the service refuses is dropped, so the next call
// exchanges the API key again.
//
//   client::NodeStorageClient storage(channel, &tokens, absl::Seconds(10));
//   GPUAAS_ASSIGN_OR_RETURN(auto credential, storage.GetMountCredential(req));
//
// The answer holds a secret: never log it. Errors: the codes storage.proto documents for the
// RPC, with the server's message; UNAVAILABLE when the service cannot be reached or no token
// could be had; DEADLINE_EXCEEDED when the deadline passed. Thread-safe; blocks.
#pragma once

#include <grpcpp/channel.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/storage/v1/storage.grpc.pb.h"
#include "libs/client/access_tokens.h"
#include "libs/client/call_context.h"

namespace gpuaas::client {

class NodeStorageClient final {
 public:
  // `tokens` may be null (no token is sent) and must outlive the client. Does not connect.
  NodeStorageClient(std::shared_ptr<grpc::ChannelInterface> channel, AccessTokens* tokens,
                    absl::Duration default_timeout = kDefaultTimeout);

  absl::StatusOr<::gpuaas::storage::v1::MountCredential> GetMountCredential(
      const ::gpuaas::storage::v1::GetMountCredentialRequest& req,
      const CallContext& call = {}) const;

 private:
  using Stub = ::gpuaas::storage::v1::NodeStorageService::StubInterface;
  std::unique_ptr<Stub> stub_;
  AccessTokens* tokens_;
  absl::Duration default_timeout_;
};

}  // namespace gpuaas::client
