#include "libs/client/node_storage_client.h"

#include "libs/client/internal/unary_call.h"

namespace gpuaas::client {

NodeStorageClient::NodeStorageClient(std::shared_ptr<grpc::ChannelInterface> channel,
                                     AccessTokens* tokens, absl::Duration default_timeout)
    : stub_(::gpuaas::storage::v1::NodeStorageService::NewStub(std::move(channel))),
      tokens_(tokens),
      default_timeout_(default_timeout) {}

absl::StatusOr<::gpuaas::storage::v1::MountCredential> NodeStorageClient::GetMountCredential(
    const ::gpuaas::storage::v1::GetMountCredentialRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::GetMountCredential, req, call, default_timeout_,
                             tokens_);
}

}  // namespace gpuaas::client
