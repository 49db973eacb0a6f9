// All SQL of the storage service, each statement a named constant next to the method that runs
// it. Methods run inside the caller's transaction (db::Tx); errors are libs/db exceptions that
// db::Pool::RunInTransaction turns into a Status.
//
// Tenant-owned rows (storages, accessors) are read through a `tenant` filter: the caller's
// tenant, or "" for global callers, who see every tenant's rows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gpuaas/storage/v1/storage.pb.h"
#include "libs/db/db.h"
#include "libs/service/paging.h"

namespace gpuaas::storage {

namespace pb = ::gpuaas::storage::v1;

// A storage row: the API's fields (without usage and attachments) and the fingerprint of the
// request that created it.
struct StorageRow {
  pb::Storage storage;
  std::string request_hash;
  // A storage restored from a snapshot: the source's storage_uid and the snapshot; empty for
  // an empty storage.
  std::string source_uid;
  std::string source_snapshot_id;
};

// An accessor's key as the S3 data plane needs it, its secret still sealed.
struct SealedKey {
  std::string access_key_id;
  std::string secret_sealed;
  std::string storage_id;
  std::string tenant_id;
  bool read_only = false;
  absl::Time expire_time;
};

// A READY storage seen as a bucket.
struct BucketRow {
  std::string storage_id;
  std::string tenant_id;
  absl::Time create_time;
  int64_t size_bytes = 0;
  int64_t max_files = 0;
  std::string storage_uid;
  std::string backend_class;
};

class Repository final {
 public:
  // Plans this transaction's statements for their actual parameters, so optional filters
  // ("$2 = '' OR tenant_id = $2") use the index their value allows (see stock's Repository).
  static void PlanForParameters(db::Tx& tx);

  // Specs (repository_specs.cc). `spec` in CanonicalSpec form.
  void InsertSpec(db::Tx& tx, const pb::StorageSpec& spec);
  std::optional<pb::StorageSpec> GetSpec(db::Tx& tx, const std::string& spec_name);
  std::vector<pb::StorageSpec> ListSpecs(db::Tx& tx, const service::PageRequest& page);
  // Writes price and description; false when the spec does not exist.
  bool UpdateSpec(db::Tx& tx, const pb::StorageSpec& spec);
  bool DeleteSpec(db::Tx& tx, const std::string& spec_name);
  int64_t CountStoragesOfSpec(db::Tx& tx, const std::string& spec_name);

  // Storages (repository_storages.cc).
  // Serialises quota decisions for `tenant_id` until the transaction ends (an advisory lock).
  void LockTenant(db::Tx& tx, const std::string& tenant_id);
  // The bytes the tenant's storages reserve, in every state.
  int64_t ReservedBytes(db::Tx& tx, const std::string& tenant_id);
  void InsertStorage(db::Tx& tx, const pb::Storage& storage, const std::string& request_hash);
  // Marks a new storage as restored from the snapshot `source_snapshot_id` of the storage whose
  // storage_uid is `source_uid`.
  void SetRestoreSource(db::Tx& tx, const std::string& storage_id, const std::string& source_uid,
                        const std::string& source_snapshot_id);
  // Any tenant's storage by id, for the global namespace of ids.
  std::optional<StorageRow> GetStorageById(db::Tx& tx, const std::string& storage_id);
  // The storage when `tenant` may see it; with `lock`, locked until the transaction ends.
  std::optional<StorageRow> GetStorage(db::Tx& tx, const std::string& tenant,
                                       const std::string& storage_id, bool lock = false);
  struct StorageFilter {
    std::string tenant;     // "" = every tenant
    std::string spec_name;  // "" = any
    pb::StorageState state = pb::STORAGE_STATE_UNSPECIFIED;
    std::string name;  // "" = any
  };
  std::vector<pb::Storage> ListStorages(db::Tx& tx, const StorageFilter& filter,
                                        const service::PageRequest& page);
  // Writes name, spec_name, size_bytes and max_files.
  void UpdateStorage(db::Tx& tx, const pb::Storage& storage);
  // Moves the storage from state `from` to `to`; false when it is not in `from` (or gone).
  bool SetState(db::Tx& tx, const std::string& storage_id, pb::StorageState from,
                pb::StorageState to);
  bool DeleteStorage(db::Tx& tx, const std::string& storage_id);
  std::vector<std::string> StoragesInState(db::Tx& tx, pb::StorageState state);

  // Attachments (repository_attachments.cc), without their mount sources.
  std::vector<pb::Attachment> AttachmentsOf(db::Tx& tx,
                                            const std::vector<std::string>& storage_ids);
  std::optional<pb::Attachment> GetAttachment(db::Tx& tx, const std::string& storage_id,
                                              const std::string& instance_id);
  // The storage's read-write attachment.
  std::optional<pb::Attachment> Writer(db::Tx& tx, const std::string& storage_id);
  void InsertAttachment(db::Tx& tx, const pb::Attachment& attachment);
  // Deletes one; returns it, or nullopt when there was none.
  std::optional<pb::Attachment> DeleteAttachment(db::Tx& tx, const std::string& storage_id,
                                                 const std::string& instance_id);

  // Accessors (repository_accessors.cc).
  void InsertAccessor(db::Tx& tx, const pb::Accessor& accessor, const std::string& secret_sealed);
  std::optional<pb::Accessor> GetAccessor(db::Tx& tx, const std::string& tenant,
                                          const std::string& access_key_id);
  std::vector<pb::Accessor> ListAccessors(db::Tx& tx, const std::string& tenant,
                                          const std::string& storage_id,
                                          const service::PageRequest& page);
  // Only an accessor of `storage_id` when it is set (the REST path names the storage).
  bool DeleteAccessor(db::Tx& tx, const std::string& tenant, const std::string& storage_id,
                      const std::string& access_key_id);
  // The key of a READY storage's accessor (expired ones too); nullopt otherwise.
  std::optional<SealedKey> FindAccessKey(db::Tx& tx, const std::string& access_key_id);

  // Buckets: READY storages.
  std::optional<BucketRow> FindBucket(db::Tx& tx, const std::string& storage_id);
  std::vector<BucketRow> ListBuckets(db::Tx& tx, const std::string& tenant);
};

}  // namespace gpuaas::storage
