#include "services/storage/snapshots.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "libs/authz/tenant_scope.h"
#include "libs/common/proto_time.h"
#include "libs/common/status_macros.h"
#include "libs/service/paging.h"
#include "services/storage/storage_rules.h"

namespace gpuaas::storage {
namespace {

pb::Snapshot ToProto(const std::string& storage_id, const SnapshotInfo& info) {
  pb::Snapshot out;
  out.set_storage_id(storage_id);
  out.set_snapshot_id(info.snapshot_id);
  out.set_used_bytes(info.bytes);
  *out.mutable_create_time() = ToProtoTime(info.create_time);
  return out;
}

}  // namespace

absl::StatusOr<std::pair<pb::Storage, Backend*>> Snapshots::ReadyStorage(
    const authz::Principal& p, const std::string& storage_id) {
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  GPUAAS_ASSIGN_OR_RETURN(pb::Storage storage,
                          pool_.Read<pb::Storage>("storage.get_storage",
                                                  [&](db::Tx& tx) -> absl::StatusOr<pb::Storage> {
                                                    std::optional<StorageRow> row =
                                                        repo_.GetStorage(tx, scope, storage_id);
                                                    if (!row) return StorageNotFound();
                                                    return std::move(row->storage);
                                                  }));
  if (storage.state() != pb::STORAGE_STATE_READY) {
    return absl::FailedPreconditionError(absl::StrCat("storage ", storage_id, " is not READY"));
  }
  GPUAAS_ASSIGN_OR_RETURN(Backend * backend, backends_.Find(storage.backend_class()));
  return std::make_pair(std::move(storage), backend);
}

absl::Status Snapshots::CreateSnapshot(const authz::Principal& p,
                                       const pb::CreateSnapshotRequest& req, pb::Snapshot& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  GPUAAS_RETURN_IF_ERROR(ValidateSnapshotId("snapshot_id", req.snapshot_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "taking a snapshot"));
  GPUAAS_ASSIGN_OR_RETURN(auto found, ReadyStorage(p, req.storage_id()));
  auto& [storage, backend] = found;
  absl::Status created = backend->CreateSnapshot(storage.storage_uid(), req.snapshot_id());
  // A snapshot is immutable, so the same id again is a retry: it answers the snapshot.
  if (!created.ok() && !absl::IsAlreadyExists(created)) return created;
  GPUAAS_ASSIGN_OR_RETURN(const std::vector<SnapshotInfo> snapshots,
                          backend->ListSnapshots(storage.storage_uid()));
  for (const SnapshotInfo& info : snapshots) {
    if (info.snapshot_id == req.snapshot_id()) {
      out = ToProto(req.storage_id(), info);
      return absl::OkStatus();
    }
  }
  return absl::AbortedError(
      absl::StrCat("snapshot ", req.snapshot_id(), " was deleted while it was being taken"));
}

absl::Status Snapshots::ListSnapshots(const authz::Principal& p,
                                      const pb::ListSnapshotsRequest& req,
                                      pb::ListSnapshotsResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "listing snapshots"));
  GPUAAS_ASSIGN_OR_RETURN(auto found, ReadyStorage(p, req.storage_id()));
  auto& [storage, backend] = found;
  GPUAAS_ASSIGN_OR_RETURN(std::vector<SnapshotInfo> snapshots,
                          backend->ListSnapshots(storage.storage_uid()));
  std::sort(snapshots.begin(), snapshots.end(),
            [](const auto& a, const auto& b) { return a.snapshot_id < b.snapshot_id; });
  std::vector<pb::Snapshot> rows;
  for (const SnapshotInfo& info : snapshots) {
    if (info.snapshot_id <= page.after) continue;
    if (rows.size() == static_cast<size_t>(page.limit)) break;
    rows.push_back(ToProto(req.storage_id(), info));
  }
  service::FillPage(page, std::move(rows), *out.mutable_snapshots(), *out.mutable_next_page_token(),
                    [](const pb::Snapshot& s) { return s.snapshot_id(); });
  return absl::OkStatus();
}

absl::Status Snapshots::DeleteSnapshot(const authz::Principal& p,
                                       const pb::DeleteSnapshotRequest& req,
                                       pb::DeleteSnapshotResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  GPUAAS_RETURN_IF_ERROR(ValidateSnapshotId("snapshot_id", req.snapshot_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "deleting a snapshot"));
  GPUAAS_ASSIGN_OR_RETURN(auto found, ReadyStorage(p, req.storage_id()));
  auto& [storage, backend] = found;
  absl::Status deleted = backend->DeleteSnapshot(storage.storage_uid(), req.snapshot_id());
  if (absl::IsNotFound(deleted)) {
    return absl::NotFoundError(absl::StrCat("snapshot_id: storage ", req.storage_id(),
                                            " has no snapshot ", req.snapshot_id()));
  }
  GPUAAS_RETURN_IF_ERROR(deleted);
  out.Clear();
  return absl::OkStatus();
}

}  // namespace gpuaas::storage
