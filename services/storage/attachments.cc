#include "services/storage/attachments.h"

#include "absl/strings/str_cat.h"
#include "libs/authz/storage_access.h"
#include "libs/authz/tenant_scope.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "libs/service/validate.h"
#include "services/storage/storage_rules.h"

namespace gpuaas::storage {
namespace {

std::string Mode(bool read_only) { return read_only ? "read-only" : "read-write"; }

}  // namespace

absl::Status Attachments::AttachStorage(const authz::Principal& p,
                                        const pb::AttachStorageRequest& req, pb::Attachment& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  GPUAAS_RETURN_IF_ERROR(ValidateInstanceId("instance_id", req.instance_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateNodeId("node_id", req.node_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  if (!req.storage_uid().empty()) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("storage_uid", req.storage_uid(), "_"));
  }
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  GPUAAS_RETURN_IF_ERROR(
      authz::RequirePower(p, authz::Power::kServiceCalls, "attaching a storage"));
  std::string backend_class;
  std::string volume_id;
  // The storage's row lock orders this against other attaches and against DeleteStorage,
  // which checks for attachments under the same lock.
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("storage.attach", [&](db::Tx& tx) -> absl::Status {
    std::optional<StorageRow> row = repo_.GetStorage(tx, scope, req.storage_id(), /*lock=*/true);
    if (!row) return absl::NotFoundError("storage not found");
    const pb::Storage& s = row->storage;
    // Checked at every attach, so at every start: the id may have passed to another storage
    // since the instance was bound to it.
    GPUAAS_RETURN_IF_ERROR(authz::AuthorizeStorageMount(
        {.tenant_id = req.tenant_id(), .storage_uid = req.storage_uid()},
        {.tenant_id = s.tenant_id(), .storage_uid = s.storage_uid()}));
    if (s.state() != pb::STORAGE_STATE_READY) {
      return absl::FailedPreconditionError(absl::StrCat(
          "storage ", s.storage_id(), " is ", pb::StorageState_Name(s.state()), ", not READY"));
    }
    backend_class = s.backend_class();
    volume_id = s.storage_uid();
    if (std::optional<pb::Attachment> held =
            repo_.GetAttachment(tx, s.storage_id(), req.instance_id())) {
      if (held->node_id() != req.node_id() || held->read_only() != req.read_only()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "instance ", req.instance_id(), " has storage ", s.storage_id(), " attached ",
            Mode(held->read_only()), " on node ", held->node_id(), ": detach it first"));
      }
      out = *std::move(held);
      out.set_storage_uid(s.storage_uid());
      return absl::OkStatus();
    }
    if (!req.read_only()) {
      if (std::optional<pb::Attachment> writer = repo_.Writer(tx, s.storage_id())) {
        return absl::FailedPreconditionError(
            absl::StrCat("storage ", s.storage_id(), " is attached read-write to instance ",
                         writer->instance_id(), "; one writer at a time (attach read-only)"));
      }
    }
    pb::Attachment a;
    a.set_storage_id(s.storage_id());
    a.set_instance_id(req.instance_id());
    a.set_node_id(req.node_id());
    a.set_read_only(req.read_only());
    repo_.InsertAttachment(tx, a);
    out = *repo_.GetAttachment(tx, s.storage_id(), req.instance_id());
    out.set_storage_uid(s.storage_uid());
    return absl::OkStatus();
  }));
  GPUAAS_ASSIGN_OR_RETURN(Backend * backend, backends_.Find(backend_class));
  GPUAAS_ASSIGN_OR_RETURN(MountSource mount, backend->MountSourceFor(volume_id, req.node_id()));
  out.mutable_mount_source()->set_host_path(std::move(mount.host_path));
  if (mount.ceph) {
    // Made now, so the id exists before the node asks for its secret; the secret is dropped
    // here and handed out only by GetMountCredential.
    GPUAAS_ASSIGN_OR_RETURN(
        MountCredential credential,
        backend->GrantMount(volume_id, MountAttachmentId(volume_id, req.instance_id()),
                            req.read_only()));
    pb::CephMount* ceph = out.mutable_mount_source()->mutable_ceph();
    for (std::string& m : mount.ceph->monitors) ceph->add_monitors(std::move(m));
    ceph->set_fs_name(std::move(mount.ceph->fs_name));
    ceph->set_path(std::move(mount.ceph->path));
    ceph->set_client_id(std::move(credential.client_id));
  }
  return absl::OkStatus();
}

absl::Status Attachments::DetachStorage(const authz::Principal& p,
                                        const pb::DetachStorageRequest& req,
                                        pb::DetachStorageResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  GPUAAS_RETURN_IF_ERROR(ValidateInstanceId("instance_id", req.instance_id()));
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  GPUAAS_RETURN_IF_ERROR(
      authz::RequirePower(p, authz::Power::kServiceCalls, "detaching a storage"));
  std::optional<pb::Attachment> removed;
  std::string backend_class;
  std::string volume_id;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("storage.detach", [&](db::Tx& tx) -> absl::Status {
    removed.reset();
    std::optional<StorageRow> row = repo_.GetStorage(tx, scope, req.storage_id(), /*lock=*/true);
    // Nothing attached to detach: a retry, or a storage gone since.
    if (!row) return absl::OkStatus();
    backend_class = row->storage.backend_class();
    volume_id = row->storage.storage_uid();
    removed = repo_.DeleteAttachment(tx, req.storage_id(), req.instance_id());
    return absl::OkStatus();
  }));
  out.set_detached(removed.has_value());
  if (backend_class.empty()) return absl::OkStatus();
  // Every time, not only when a row went: a detach retried after a failed revoke revokes again.
  GPUAAS_ASSIGN_OR_RETURN(Backend * revoker, backends_.Find(backend_class));
  if (absl::Status revoked =
          revoker->RevokeMount(volume_id, MountAttachmentId(volume_id, req.instance_id()));
      !revoked.ok()) {
    return absl::UnavailableError(absl::StrCat("storage ", req.storage_id(), ": revoking instance ",
                                               req.instance_id(),
                                               "'s mount credential: ", revoked.message()));
  }
  if (!removed || removed->read_only()) return absl::OkStatus();
  // The workload wrote through its mount, past the volume's own accounting.
  absl::StatusOr<Backend*> backend = backends_.Find(backend_class);
  absl::Status recounted = backend.status();
  if (recounted.ok()) recounted = (*backend)->Recount(volume_id).status();
  if (!recounted.ok()) {
    Logger("storage")->warn("storage {}: recounting usage after detaching instance {}: {}",
                            req.storage_id(), req.instance_id(), recounted.ToString());
  }
  return absl::OkStatus();
}

absl::Status Attachments::GetMountCredential(const authz::Principal& p,
                                             const pb::GetMountCredentialRequest& req,
                                             pb::MountCredential& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  GPUAAS_RETURN_IF_ERROR(ValidateInstanceId("instance_id", req.instance_id()));
  // Refuses callers without node calls before anything is looked up.
  if (absl::Status s = authz::AuthorizeMountCredential(p, std::nullopt);
      absl::IsPermissionDenied(s)) {
    return s;
  }
  return pool_.RunInTransaction("storage.mount_credential", [&](db::Tx& tx) -> absl::Status {
    // Any tenant's: the agent acts for a node, not a tenant. The lock orders this against
    // DetachStorage, which revokes after deleting the row under the same lock.
    std::optional<StorageRow> row = repo_.GetStorage(tx, "", req.storage_id(), /*lock=*/true);
    std::optional<pb::Attachment> attachment;
    if (row) attachment = repo_.GetAttachment(tx, req.storage_id(), req.instance_id());
    std::optional<std::string_view> node;
    if (attachment) node = attachment->node_id();
    GPUAAS_RETURN_IF_ERROR(authz::AuthorizeMountCredential(p, node));
    GPUAAS_ASSIGN_OR_RETURN(Backend * backend, backends_.Find(row->storage.backend_class()));
    const std::string& volume_id = row->storage.storage_uid();
    GPUAAS_ASSIGN_OR_RETURN(
        MountCredential credential,
        backend->GrantMount(volume_id, MountAttachmentId(volume_id, req.instance_id()),
                            attachment->read_only()));
    if (credential.key.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("storage ", req.storage_id(), ": its backend's mounts need no credential"));
    }
    out.set_client_id(std::move(credential.client_id));
    out.set_key(std::move(credential.key));
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::storage
