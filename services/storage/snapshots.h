// Snapshots of a tenant's storages: read-only copies kept by the storage's backend (CephFS
// snapshots of its subvolume). Their only record is the backend's: a snapshot has no row, so
// nothing can disagree with the cluster after a crash between the two, and any replica answers
// the same. The storage's row (in PostgreSQL) says who may see them: a storage of another tenant
// is NOT_FOUND, and so are its snapshots. Restoring one is CreateStorage with source_snapshot
// (storages.h).
//
// Every method blocks on PostgreSQL and the backend and returns the errors storage.proto
// documents for its RPC.
#pragma once

#include "absl/status/status.h"
#include "gpuaas/storage/v1/storage.pb.h"
#include "libs/authz/principal.h"
#include "libs/db/db.h"
#include "services/storage/backends.h"
#include "services/storage/repository.h"

namespace gpuaas::storage {

class Snapshots final {
 public:
  Snapshots(db::Pool& pool, Repository& repo, const Backends& backends)
      : pool_(pool), repo_(repo), backends_(backends) {}

  absl::Status CreateSnapshot(const authz::Principal& p, const pb::CreateSnapshotRequest& req,
                              pb::Snapshot& out);
  absl::Status ListSnapshots(const authz::Principal& p, const pb::ListSnapshotsRequest& req,
                             pb::ListSnapshotsResponse& out);
  absl::Status DeleteSnapshot(const authz::Principal& p, const pb::DeleteSnapshotRequest& req,
                              pb::DeleteSnapshotResponse& out);

 private:
  // The caller's READY storage and its backend; NOT_FOUND for another tenant's.
  absl::StatusOr<std::pair<pb::Storage, Backend*>> ReadyStorage(const authz::Principal& p,
                                                                const std::string& storage_id);

  db::Pool& pool_;
  Repository& repo_;
  const Backends& backends_;
};

}  // namespace gpuaas::storage
