#include "services/agent/ceph_keys.h"

#include <utility>

#include "libs/client/storage_client.h"

namespace gpuaas::agent {

CephKeyFetch StorageCephKeys(std::shared_ptr<grpc::ChannelInterface> storage_channel,
                             client::AccessTokens* tokens) {
  auto storage =
      std::make_shared<client::StorageClient>(std::move(storage_channel), absl::Seconds(10));
  return [storage, tokens](const std::string& storage_id,
                           const std::string& instance_id) -> absl::StatusOr<CephKey> {
    client::CallContext call;
    if (tokens != nullptr) {
      absl::StatusOr<std::string> token = tokens->Get();
      if (!token.ok()) return token.status();
      call.set_bearer_token(*token);
    }
    client::storagepb::GetMountCredentialRequest req;
    req.set_storage_id(storage_id);
    req.set_instance_id(instance_id);
    absl::StatusOr<client::storagepb::MountCredential> got = storage->GetMountCredential(req, call);
    if (!got.ok()) return got.status();
    return CephKey{.client_id = got->client_id(), .key = got->key()};
  };
}

}  // namespace gpuaas::agent
