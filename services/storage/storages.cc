#include "services/storage/storages.h"

#include "absl/strings/str_cat.h"
#include "libs/authz/tenant_scope.h"
#include "libs/common/logging.h"
#include "libs/common/quantity.h"
#include "libs/common/status_macros.h"
#include "libs/rpc/handler.h"
#include "libs/service/paging.h"
#include "libs/service/update_mask.h"
#include "libs/service/validate.h"
#include "services/storage/storage_rules.h"

namespace gpuaas::storage {
namespace {

constexpr std::string_view kCreateStorage = "CreateStorage";

// RESOURCE_EXHAUSTED unless `asked` more bytes fit beside `reserved` within `quota`.
absl::Status CheckQuota(const std::string& tenant_id, int64_t reserved, int64_t asked,
                        int64_t quota) {
  if (asked <= quota && reserved <= quota - asked) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "quota max_storage_bytes of tenant ", tenant_id, " exceeded: ", FormatBytes(reserved),
      " reserved + ", FormatBytes(asked), " asked > ", FormatBytes(quota),
      " (ask a platform admin to raise it, or delete storages)"));
}

VolumeLimits LimitsOf(const pb::Storage& s) {
  return VolumeLimits{.max_bytes = s.size_bytes(), .max_files = s.max_files()};
}

}  // namespace

absl::Status Storages::CreateStorage(const authz::Principal& p,
                                     const client::CallerCredentials& caller,
                                     const pb::CreateStorageRequest& req, pb::Storage& out) {
  if (!req.storage_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  }
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequestId("request_id", req.request_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("name", req.name()));
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  if (!req.tenant_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  }
  const bool restore = req.has_source_snapshot();
  if (restore) {
    GPUAAS_RETURN_IF_ERROR(
        ValidateStorageId("source_snapshot.storage_id", req.source_snapshot().storage_id()));
    GPUAAS_RETURN_IF_ERROR(
        ValidateSnapshotId("source_snapshot.snapshot_id", req.source_snapshot().snapshot_id()));
  }
  GPUAAS_ASSIGN_OR_RETURN(const std::string tenant, authz::TargetTenant(p, req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "creating a storage"));
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  // The snapshot to restore, of a storage of the new storage's tenant (another tenant's is
  // NOT_FOUND), checked before the row exists so a missing one never leaves a CREATING row.
  if (restore) {
    GPUAAS_RETURN_IF_ERROR(CheckRestoreSource(tenant, req.source_snapshot()));
  }
  // Read before the transaction: no network calls while it holds locks.
  GPUAAS_ASSIGN_OR_RETURN(const int64_t quota, quotas_.MaxStorageBytes(tenant, caller));
  const std::string fingerprint = service::Fingerprint(req);
  const std::string label = rpc::PrincipalLabel(p);

  StorageRow created;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("storage.create_storage", [&](db::Tx& tx) {
    repo_.LockTenant(tx, tenant);
    absl::StatusOr<service::CreateOutcome> outcome = log_.Create(
        tx, {.method = kCreateStorage, .caller = label, .request_id = req.request_id()}, req,
        [&](db::Tx& tx) -> absl::StatusOr<std::string> {
          const std::string id = req.storage_id().empty() ? NewStorageId() : req.storage_id();
          if (std::optional<StorageRow> taken = repo_.GetStorageById(tx, id)) {
            const bool retry =
                taken->storage.tenant_id() == tenant && taken->request_hash == fingerprint;
            if (retry) return id;
            return absl::AlreadyExistsError(
                absl::StrCat("storage_id: ", id, " is taken; choose another"));
          }
          std::optional<pb::StorageSpec> spec = repo_.GetSpec(tx, req.spec_name());
          if (!spec) return SpecNotFound(req.spec_name());
          GPUAAS_RETURN_IF_ERROR(backends_.Find(spec->backend_class()).status());
          GPUAAS_RETURN_IF_ERROR(
              CheckQuota(tenant, repo_.ReservedBytes(tx, tenant), spec->size_bytes(), quota));
          pb::Storage s;
          s.set_storage_id(id);
          s.set_storage_uid(NewStorageUid());
          s.set_tenant_id(tenant);
          s.set_name(req.name());
          s.set_spec_name(spec->spec_name());
          s.set_backend_class(spec->backend_class());
          s.set_size_bytes(spec->size_bytes());
          s.set_max_files(spec->max_files());
          s.set_state(pb::STORAGE_STATE_CREATING);
          repo_.InsertStorage(tx, s, fingerprint);
          if (restore) {
            std::optional<StorageRow> source =
                repo_.GetStorage(tx, tenant, req.source_snapshot().storage_id());
            if (!source) return StorageNotFound();
            if (source->storage.backend_class() != spec->backend_class()) {
              return absl::FailedPreconditionError(
                  absl::StrCat("source_snapshot.storage_id: storage ", source->storage.storage_id(),
                               " keeps its data in backend ", source->storage.backend_class(),
                               ", spec ", spec->spec_name(), " in ", spec->backend_class(),
                               ": restore into a spec of the same backend"));
            }
            repo_.SetRestoreSource(tx, id, source->storage.storage_uid(),
                                   req.source_snapshot().snapshot_id());
          }
          return id;
        });
    if (!outcome.ok()) return outcome.status();
    std::optional<StorageRow> row = repo_.GetStorageById(tx, outcome->id);
    if (!row) return StorageNotFound();  // created, then deleted since
    created = *std::move(row);
    return absl::OkStatus();
  }));
  // A retry of a create cut short before its volume was made finishes it.
  if (created.storage.state() == pb::STORAGE_STATE_CREATING) {
    GPUAAS_RETURN_IF_ERROR(FinishCreate(created));
  }
  return Describe(scope, created.storage.storage_id(), out);
}

absl::Status Storages::GetStorage(const authz::Principal& p, const pb::GetStorageRequest& req,
                                  pb::Storage& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "reading a storage"));
  return Describe(scope, req.storage_id(), out);
}

absl::Status Storages::ListStorages(const authz::Principal& p, const pb::ListStoragesRequest& req,
                                    pb::ListStoragesResponse& out) {
  if (!req.spec_name().empty()) {
    GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  }
  if (!pb::StorageState_IsValid(req.state())) {
    return service::InvalidField("state", "unknown storage state");
  }
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("name", req.name()));
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  Repository::StorageFilter filter{
      .spec_name = req.spec_name(), .state = req.state(), .name = req.name()};
  GPUAAS_ASSIGN_OR_RETURN(filter.tenant, authz::TenantScope(p));
  if (!req.tenant_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
    GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, req.tenant_id(), "tenant"));
    filter.tenant = req.tenant_id();
  }
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "listing storages"));
  return pool_.RunInTransaction("storage.list_storages", [&](db::Tx& tx) {
    Repository::PlanForParameters(tx);
    std::vector<pb::Storage> storages = repo_.ListStorages(tx, filter, page);
    std::vector<std::string> ids;
    for (const pb::Storage& s : storages) ids.push_back(s.storage_id());
    std::vector<pb::Attachment> attachments = repo_.AttachmentsOf(tx, ids);
    // Both are ordered by storage_id: one merge pass.
    size_t a = 0;
    for (pb::Storage& s : storages) {
      while (a < attachments.size() && attachments[a].storage_id() < s.storage_id()) ++a;
      while (a < attachments.size() && attachments[a].storage_id() == s.storage_id()) {
        *s.add_attachments() = std::move(attachments[a++]);
      }
    }
    service::FillPage(page, std::move(storages), *out.mutable_storages(),
                      *out.mutable_next_page_token(),
                      [](const pb::Storage& s) { return s.storage_id(); });
    return absl::OkStatus();
  });
}

absl::Status Storages::UpdateStorage(const authz::Principal& p,
                                     const client::CallerCredentials& caller,
                                     const pb::UpdateStorageRequest& req, pb::Storage& out) {
  const pb::Storage& in = req.storage();
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage.storage_id", in.storage_id()));
  GPUAAS_ASSIGN_OR_RETURN(service::UpdateMask mask,
                          service::UpdateMask::Parse(req.update_mask(), {"name", "spec_name"}));
  if (mask.Touches("name")) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("storage.name", in.name()));
  }
  if (mask.Touches("spec_name")) {
    GPUAAS_RETURN_IF_ERROR(ValidateSpecName("storage.spec_name", in.spec_name()));
  }
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "changing a storage"));
  GPUAAS_ASSIGN_OR_RETURN(
      const StorageRow before,
      pool_.Read<StorageRow>("storage.get_storage", [&](db::Tx& tx) -> absl::StatusOr<StorageRow> {
        std::optional<StorageRow> row = repo_.GetStorage(tx, scope, in.storage_id());
        if (!row) return StorageNotFound();
        return *std::move(row);
      }));
  const std::string& tenant = before.storage.tenant_id();
  const bool respec = mask.Touches("spec_name") && in.spec_name() != before.storage.spec_name();
  int64_t quota = 0;
  if (respec) {
    GPUAAS_ASSIGN_OR_RETURN(quota, quotas_.MaxStorageBytes(tenant, caller));
  }
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("storage.update_storage", [&](db::Tx& tx) {
    if (respec) repo_.LockTenant(tx, tenant);
    std::optional<StorageRow> row = repo_.GetStorage(tx, scope, in.storage_id(), /*lock=*/true);
    if (!row) return StorageNotFound();
    pb::Storage& s = row->storage;
    if (s.state() == pb::STORAGE_STATE_DELETING) {
      return absl::FailedPreconditionError(
          absl::StrCat("storage ", s.storage_id(), " is being deleted"));
    }
    if (respec && in.spec_name() != s.spec_name()) {
      if (s.state() != pb::STORAGE_STATE_READY) {
        return absl::FailedPreconditionError(
            absl::StrCat("storage ", s.storage_id(), " is not READY yet"));
      }
      std::optional<pb::StorageSpec> spec = repo_.GetSpec(tx, in.spec_name());
      if (!spec) return SpecNotFound(in.spec_name());
      if (spec->backend_class() != s.backend_class()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "storage.spec_name: spec ", spec->spec_name(), " keeps its data in backend ",
            spec->backend_class(), ", the storage's is in ", s.backend_class()));
      }
      if (spec->size_bytes() < s.size_bytes() || spec->max_files() < s.max_files()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "storage.spec_name: spec ", spec->spec_name(), " (", spec->size(), ", ",
            spec->max_files(), " files) is smaller than the storage (", FormatBytes(s.size_bytes()),
            ", ", s.max_files(), " files): storages grow, never shrink"));
      }
      GPUAAS_RETURN_IF_ERROR(CheckQuota(tenant, repo_.ReservedBytes(tx, tenant),
                                        spec->size_bytes() - s.size_bytes(), quota));
      s.set_spec_name(spec->spec_name());
      s.set_size_bytes(spec->size_bytes());
      s.set_max_files(spec->max_files());
    }
    if (mask.Touches("name")) s.set_name(in.name());
    repo_.UpdateStorage(tx, s);
    return absl::OkStatus();
  }));
  return Describe(scope, in.storage_id(), out);
}

absl::Status Storages::DeleteStorage(const authz::Principal& p, const pb::DeleteStorageRequest& req,
                                     pb::DeleteStorageResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "deleting a storage"));
  pb::Storage deleting;
  // The mark is committed before any byte is removed: from here on the storage is gone for the
  // data plane, and whoever comes next (a retry, a restart) finishes the delete.
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("storage.mark_deleting", [&](db::Tx& tx) {
    std::optional<StorageRow> row = repo_.GetStorage(tx, scope, req.storage_id(), /*lock=*/true);
    if (!row) return StorageNotFound();
    const pb::Storage& s = row->storage;
    std::vector<pb::Attachment> attached = repo_.AttachmentsOf(tx, {s.storage_id()});
    if (!attached.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("storage ", s.storage_id(), " is attached to instance ",
                       attached.front().instance_id(), ": detach it first"));
    }
    if (s.state() != pb::STORAGE_STATE_DELETING) {
      repo_.SetState(tx, s.storage_id(), s.state(), pb::STORAGE_STATE_DELETING);
    }
    deleting = s;
    return absl::OkStatus();
  }));
  GPUAAS_RETURN_IF_ERROR(FinishDelete(deleting));
  out.Clear();
  return absl::OkStatus();
}

absl::Status Storages::CheckRestoreSource(const std::string& tenant,
                                          const pb::SnapshotRef& source) {
  GPUAAS_ASSIGN_OR_RETURN(
      const StorageRow row,
      pool_.Read<StorageRow>("storage.get_storage", [&](db::Tx& tx) -> absl::StatusOr<StorageRow> {
        std::optional<StorageRow> row = repo_.GetStorage(tx, tenant, source.storage_id());
        if (!row) return StorageNotFound();
        return *std::move(row);
      }));
  if (row.storage.state() != pb::STORAGE_STATE_READY) {
    return absl::FailedPreconditionError(
        absl::StrCat("source_snapshot.storage_id: storage ", source.storage_id(), " is not READY"));
  }
  GPUAAS_ASSIGN_OR_RETURN(Backend * backend, backends_.Find(row.storage.backend_class()));
  GPUAAS_ASSIGN_OR_RETURN(const std::vector<SnapshotInfo> snapshots,
                          backend->ListSnapshots(row.storage.storage_uid()));
  for (const SnapshotInfo& snapshot : snapshots) {
    if (snapshot.snapshot_id == source.snapshot_id()) return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("source_snapshot.snapshot_id: storage ",
                                          source.storage_id(), " has no snapshot ",
                                          source.snapshot_id()));
}

absl::Status Storages::FinishCreate(const StorageRow& row) {
  const pb::Storage& storage = row.storage;
  const std::string& storage_id = storage.storage_id();
  GPUAAS_ASSIGN_OR_RETURN(Backend * backend, backends_.Find(storage.backend_class()));
  if (row.source_uid.empty()) {
    GPUAAS_RETURN_IF_ERROR(backend->CreateVolume(storage.storage_uid(), LimitsOf(storage)));
  } else if (absl::Status restored = backend->RestoreSnapshot(
                 row.source_uid, row.source_snapshot_id, storage.storage_uid(), LimitsOf(storage));
             !restored.ok()) {
    // A snapshot deleted meanwhile or too large for the spec never restores: the storage goes
    // instead of staying CREATING. Anything else (the cluster down) is retried.
    if (absl::IsNotFound(restored) || absl::IsResourceExhausted(restored) ||
        absl::IsInvalidArgument(restored) || absl::IsFailedPrecondition(restored)) {
      GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("storage.mark_deleting", [&](db::Tx& tx) {
        repo_.SetState(tx, storage_id, pb::STORAGE_STATE_CREATING, pb::STORAGE_STATE_DELETING);
        return absl::OkStatus();
      }));
      GPUAAS_RETURN_IF_ERROR(FinishDelete(storage));
    }
    return restored;
  }
  bool gone = false;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("storage.mark_ready", [&](db::Tx& tx) {
    gone = false;
    if (repo_.SetState(tx, storage_id, pb::STORAGE_STATE_CREATING, pb::STORAGE_STATE_READY)) {
      return absl::OkStatus();
    }
    std::optional<StorageRow> now = repo_.GetStorageById(tx, storage_id);
    gone = !now || now->storage.storage_uid() != storage.storage_uid() ||
           now->storage.state() == pb::STORAGE_STATE_DELETING;
    return absl::OkStatus();
  }));
  if (!gone) return absl::OkStatus();
  // Deleted while its volume was being made: the delete may have removed the volume before
  // CreateVolume made it again, so remove it once more.
  if (absl::Status s = backend->DeleteVolume(storage.storage_uid()); !s.ok()) {
    Logger("storage")->warn(
        "storage {}: removing the volume of a storage deleted while created: {}", storage_id,
        s.ToString());
  }
  return absl::AbortedError(
      absl::StrCat("storage ", storage_id, " was deleted while it was being created"));
}

absl::Status Storages::FinishDelete(const pb::Storage& storage) {
  GPUAAS_ASSIGN_OR_RETURN(Backend * backend, backends_.Find(storage.backend_class()));
  GPUAAS_RETURN_IF_ERROR(backend->DeleteVolume(storage.storage_uid()));
  return pool_.RunInTransaction("storage.delete_storage", [&](db::Tx& tx) {
    repo_.DeleteStorage(tx, storage.storage_id());
    return absl::OkStatus();
  });
}

absl::Status Storages::Describe(const std::string& scope, const std::string& storage_id,
                                pb::Storage& out) {
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("storage.describe_storage", [&](db::Tx& tx) {
    std::optional<StorageRow> row = repo_.GetStorage(tx, scope, storage_id);
    if (!row) return StorageNotFound();
    out = std::move(row->storage);
    for (pb::Attachment& a : repo_.AttachmentsOf(tx, {storage_id})) {
      *out.add_attachments() = std::move(a);
    }
    return absl::OkStatus();
  }));
  if (out.state() != pb::STORAGE_STATE_READY) return absl::OkStatus();
  GPUAAS_ASSIGN_OR_RETURN(Backend * backend, backends_.Find(out.backend_class()));
  absl::StatusOr<std::shared_ptr<Volume>> volume =
      backend->OpenVolume(out.storage_uid(), LimitsOf(out));
  if (absl::IsNotFound(volume.status())) {
    return absl::InternalError(absl::StrCat(
        "storage ", storage_id, ": its volume is missing from backend ", out.backend_class()));
  }
  GPUAAS_RETURN_IF_ERROR(volume.status());
  const VolumeUsage usage = (*volume)->Usage();
  out.set_used_bytes(usage.bytes);
  out.set_used_files(usage.files);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StorageRow>> Storages::InState(pb::StorageState state) {
  return pool_.Read<std::vector<StorageRow>>(
      "storage.unsettled", [&](db::Tx& tx) -> absl::StatusOr<std::vector<StorageRow>> {
        std::vector<StorageRow> out;
        for (const std::string& id : repo_.StoragesInState(tx, state)) {
          if (std::optional<StorageRow> row = repo_.GetStorageById(tx, id)) {
            out.push_back(*std::move(row));
          }
        }
        return out;
      });
}

absl::StatusOr<int> Storages::ResumeCreates() {
  GPUAAS_ASSIGN_OR_RETURN(std::vector<StorageRow> creating, InState(pb::STORAGE_STATE_CREATING));
  int finished = 0;
  for (const StorageRow& row : creating) {
    if (absl::Status st = FinishCreate(row); !st.ok()) {
      Logger("storage")->warn("storage {}: finishing its create: {}", row.storage.storage_id(),
                              st.ToString());
      continue;
    }
    ++finished;
  }
  return finished;
}

absl::StatusOr<int> Storages::ResumeDeletes() {
  GPUAAS_ASSIGN_OR_RETURN(std::vector<StorageRow> deleting, InState(pb::STORAGE_STATE_DELETING));
  int finished = 0;
  for (const StorageRow& row : deleting) {
    const pb::Storage& s = row.storage;
    if (absl::Status st = FinishDelete(s); !st.ok()) {
      Logger("storage")->warn("storage {}: finishing its delete: {}", s.storage_id(),
                              st.ToString());
      continue;
    }
    ++finished;
  }
  return finished;
}

}  // namespace gpuaas::storage
