// Who may read or write a storage's data through the S3 data plane. Two kinds of callers reach
// it: a user or service with an access token (a Principal), and an S3 accessor key, which is
// scoped to one storage and may be read-only. Both decisions are made here and nowhere else,
// and so is which storage an instance may mount.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "libs/authz/principal.h"

namespace gpuaas::authz {

enum class DataAction {
  kList,   // list buckets or a bucket's objects
  kRead,   // read objects
  kWrite,  // put, copy, delete objects; multipart uploads
};

// The scope an accessor key carries.
struct StorageGrant {
  std::string storage_id;
  std::string tenant_id;
  bool read_only = false;
};

// A token's caller: the storage's tenant (else NOT_FOUND "storage not found"), or a global
// role; reading and listing need Power::kRead, writing needs Power::kUse (else
// PERMISSION_DENIED).
absl::Status AuthorizeStorageData(const Principal& p, std::string_view storage_tenant_id,
                                  DataAction action);

// An accessor key: only its own storage (else NOT_FOUND), and no write when read-only (else
// PERMISSION_DENIED).
absl::Status AuthorizeStorageData(const StorageGrant& grant, std::string_view storage_id,
                                  DataAction action);

// A storage as an instance was bound to it (at its create), or as the storage is now.
struct StorageIdentity {
  std::string_view tenant_id;
  // Storage.storage_uid: never passed on to a later storage of the same storage_id.
  std::string_view storage_uid;
};

// May an instance bound to `bound` mount `storage`? Only a storage of the instance's tenant
// with the identity the instance was bound to; anything else is NOT_FOUND "storage not found"
// (as another tenant's storage is everywhere). An empty bound.storage_uid (an instance created
// before storages had identities) is checked by tenant alone. Pure.
absl::Status AuthorizeStorageMount(const StorageIdentity& bound, const StorageIdentity& storage);

// May `p` have the secret that mounts an attachment made for node `attachment_node_id`
// (nullopt: there is no such attachment) through StorageService.GetMountCredential? Only that
// node's agent: a NODE_AGENT whose key is bound to that node. Another node's agent gets
// NOT_FOUND "attachment not found", as when there is no attachment, so an agent learns nothing
// of other nodes' attachments; callers without node calls (tenants, services, platform admins:
// the key is the node's, and no one else mounts) PERMISSION_DENIED, whether it exists or not.
// Pure.
absl::Status AuthorizeMountCredential(const Principal& p,
                                      std::optional<std::string_view> attachment_node_id);

}  // namespace gpuaas::authz
