// Storages: a tenant's volumes. The rows live in PostgreSQL, the bytes in a Backend; every
// change that touches both is ordered so a crash in between leaves a state a restart (or a
// retry) finishes:
//
//   create: row CREATING (quota checked in the same transaction) -> CreateVolume -> READY
//           (restore: the row names the snapshot; RestoreSnapshot instead of CreateVolume)
//   delete: row DELETING (refused while attached)                 -> DeleteVolume -> row gone
//
// Quota decisions for one tenant are serialised by a transaction-scoped advisory lock, so
// concurrent creates and grows on any number of replicas never reserve more than the tenant's
// max_storage_bytes together.
//
// Every method blocks on PostgreSQL (creates and grows also on the auth service for the quota,
// and on the backend) and returns the errors storage.proto documents for its RPC.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpuaas/storage/v1/storage.pb.h"
#include "libs/authz/principal.h"
#include "libs/db/db.h"
#include "libs/service/request_log.h"
#include "services/storage/backends.h"
#include "services/storage/repository.h"
#include "services/storage/tenant_quotas.h"

namespace gpuaas::storage {

class Storages final {
 public:
  Storages(db::Pool& pool, Repository& repo, const Backends& backends, const TenantQuotas& quotas)
      : pool_(pool), repo_(repo), backends_(backends), quotas_(quotas) {}

  // `caller` reads the tenant's quota from the auth service on the caller's behalf.
  absl::Status CreateStorage(const authz::Principal& p, const client::CallerCredentials& caller,
                             const pb::CreateStorageRequest& req, pb::Storage& out);
  absl::Status GetStorage(const authz::Principal& p, const pb::GetStorageRequest& req,
                          pb::Storage& out);
  absl::Status ListStorages(const authz::Principal& p, const pb::ListStoragesRequest& req,
                            pb::ListStoragesResponse& out);
  absl::Status UpdateStorage(const authz::Principal& p, const client::CallerCredentials& caller,
                             const pb::UpdateStorageRequest& req, pb::Storage& out);
  absl::Status DeleteStorage(const authz::Principal& p, const pb::DeleteStorageRequest& req,
                             pb::DeleteStorageResponse& out);

  // Finish what a crash cut short: storages left CREATING get their volume and turn READY;
  // storages left DELETING lose their volume and their row. Run at start-up, before serving.
  // A storage that fails is logged and left as it is (DeleteStorage retries it). Returns how
  // many were finished. Errors: UNAVAILABLE when the database is down.
  absl::StatusOr<int> ResumeCreates();
  absl::StatusOr<int> ResumeDeletes();

 private:
  // CREATING -> volume -> READY. Volumes are named by storage_uid, never by the reusable
  // storage_id, so a later storage of the same id never sees this one's bytes.
  // A storage restored from a snapshot gets the snapshot's data instead of an empty volume;
  // when the snapshot cannot be restored (gone, too large) the storage is deleted.
  absl::Status FinishCreate(const StorageRow& row);
  // NOT_FOUND unless `source` names a READY storage of `tenant` that has that snapshot.
  absl::Status CheckRestoreSource(const std::string& tenant, const pb::SnapshotRef& source);
  // DELETING -> no volume -> no row.
  absl::Status FinishDelete(const pb::Storage& storage);
  // The storages in `state`, for the resume passes.
  absl::StatusOr<std::vector<StorageRow>> InState(pb::StorageState state);
  // The storage as the API shows one: attachments, and usage when READY.
  absl::Status Describe(const std::string& scope, const std::string& storage_id, pb::Storage& out);

  db::Pool& pool_;
  Repository& repo_;
  const Backends& backends_;
  const TenantQuotas& quotas_;
  service::RequestLog log_{"storage"};
};

}  // namespace gpuaas::storage
