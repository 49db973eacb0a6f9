// Where the agent gets the keys of its Ceph storages' mounts: the storage service's
// GetMountCredential, called with this node's own token, which answers only for attachments on
// this node (issue 33). The key is passed on to the mount and kept nowhere.
#pragma once

#include <grpcpp/channel.h>

#include <memory>

#include "libs/client/access_tokens.h"
#include "services/agent/runtime/ceph_mounting_runtime.h"

namespace gpuaas::agent {

// `tokens` (the node's; nullptr: no token is sent, and the storage service refuses) must
// outlive the answer. Each call blocks up to 10 s.
CephKeyFetch StorageCephKeys(std::shared_ptr<grpc::ChannelInterface> storage_channel,
                             client::AccessTokens* tokens);

}  // namespace gpuaas::agent
