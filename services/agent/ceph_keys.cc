#include "services/agent/ceph_keys.h"

#include <utility>

#include "libs/client/node_storage_client.h"

namespace gpuaas::agent {

CephKeyFetch StorageCephKeys(std::shared_ptr<grpc::ChannelInterface> storage_channel,
                             client::AccessTokens* tokens) {
  auto storage = std::make_shared<client::NodeStorageClient>(std::move(storage_channel), tokens,
                                                             absl::Seconds(10));
  return [storage](const std::string& storage_id,
                   const std::string& instance_id) -> absl::StatusOr<CephKey> {
    ::gpuaas::storage::v1::GetMountCredentialRequest req;
    req.set_storage_id(storage_id);
    req.set_instance_id(instance_id);
    absl::StatusOr<::gpuaas::storage::v1::MountCredential> got = storage->GetMountCredential(req);
    if (!got.ok()) return got.status();
    return CephKey{.client_id = got->client_id(), .key = got->key()};
  };
}

}  // namespace gpuaas::agent
