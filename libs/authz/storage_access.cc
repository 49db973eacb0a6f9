#include "libs/authz/storage_access.h"

namespace gpuaas::authz {

absl::Status AuthorizeStorageData(const Principal& p, std::string_view storage_tenant_id,
                                  DataAction action) {
  if (absl::Status s = RequireTenant(p, storage_tenant_id, "storage"); !s.ok()) {
    return s;
  }
  return action == DataAction::kWrite ? RequirePower(p, Power::kUse, "writing a storage's data")
                                      : RequirePower(p, Power::kRead, "reading a storage's data");
}

absl::Status AuthorizeStorageData(const StorageGrant& grant, std::string_view storage_id,
                                  DataAction action) {
  if (grant.storage_id != storage_id) {
    return absl::NotFoundError("storage not found");
  }
  if (action == DataAction::kWrite && grant.read_only) {
    return absl::PermissionDeniedError("permission denied: the accessor is read-only");
  }
  return absl::OkStatus();
}

absl::Status AuthorizeMountCredential(const Principal& p,
                                      std::optional<std::string_view> attachment_node_id) {
  if (absl::Status s = RequirePower(p, Power::kNodeCalls, "reading a mount credential"); !s.ok()) {
    return s;
  }
  if (!attachment_node_id || p.node_id.empty() || p.node_id != *attachment_node_id) {
    return absl::NotFoundError("attachment not found");
  }
  return absl::OkStatus();
}

absl::Status AuthorizeStorageMount(const StorageIdentity& bound, const StorageIdentity& storage) {
  const bool same_tenant = !bound.tenant_id.empty() && bound.tenant_id == storage.tenant_id;
  const bool same_identity = bound.storage_uid.empty() || bound.storage_uid == storage.storage_uid;
  if (!same_tenant || !same_identity) {
    return absl::NotFoundError("storage not found");
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::authz
