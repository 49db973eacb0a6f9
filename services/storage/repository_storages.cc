// Storages and the tenant quota's lock. States are StorageState numbers: 1 CREATING, 2 READY,
// 3 DELETING.
#include "absl/strings/str_cat.h"
#include "libs/common/proto_time.h"
#include "services/storage/repository.h"

namespace gpuaas::storage {
namespace {

// clang-format off
#define GPUAAS_STORAGE_FROM                                                                    \
  "SELECT storage_id, tenant_id, name, spec_name, backend_class, size_bytes, max_files, "      \
  "state, request_hash, " GPUAAS_SQL_MICROS("create_time") ", " GPUAAS_SQL_MICROS("update_time") \
  ", storage_uid, coalesce(source_uid, ''), coalesce(source_snapshot_id, '') "              \
  "FROM storage.storages "
// clang-format on

StorageRow StorageFromRow(const db::Row& r) {
  StorageRow row;
  pb::Storage& s = row.storage;
  s.set_storage_id(r.Get<std::string>(0));
  s.set_tenant_id(r.Get<std::string>(1));
  s.set_name(r.Get<std::string>(2));
  s.set_spec_name(r.Get<std::string>(3));
  s.set_backend_class(r.Get<std::string>(4));
  s.set_size_bytes(r.Get<int64_t>(5));
  s.set_max_files(r.Get<int64_t>(6));
  s.set_state(r.GetEnum<pb::StorageState>(7));
  row.request_hash = r.Get<std::string>(8);
  *s.mutable_create_time() = ToProtoTime(r.GetTime(9));
  *s.mutable_update_time() = ToProtoTime(r.GetTime(10));
  s.set_storage_uid(r.Get<std::string>(11));
  row.source_uid = r.Get<std::string>(12);
  row.source_snapshot_id = r.Get<std::string>(13);
  return row;
}

}  // namespace

void Repository::LockTenant(db::Tx& tx, const std::string& tenant_id) {
  constexpr std::string_view kLockTenant = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";
  tx.Exec(kLockTenant, absl::StrCat("storage.quota/", tenant_id));
}

int64_t Repository::ReservedBytes(db::Tx& tx, const std::string& tenant_id) {
  constexpr std::string_view kReservedBytes =
      "SELECT coalesce(sum(size_bytes), 0)::int8 FROM storage.storages WHERE tenant_id = $1";
  return tx.Exec(kReservedBytes, tenant_id).First()->Get<int64_t>(0);
}

void Repository::InsertStorage(db::Tx& tx, const pb::Storage& s, const std::string& request_hash) {
  constexpr std::string_view kInsertStorage =
      "INSERT INTO storage.storages (storage_id, tenant_id, name, spec_name, backend_class, "
      "size_bytes, max_files, state, request_hash, storage_uid) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
  tx.Exec(kInsertStorage, s.storage_id(), s.tenant_id(), s.name(), s.spec_name(), s.backend_class(),
          s.size_bytes(), s.max_files(), s.state(), request_hash, s.storage_uid());
}

void Repository::SetRestoreSource(db::Tx& tx, const std::string& storage_id,
                                  const std::string& source_uid,
                                  const std::string& source_snapshot_id) {
  constexpr std::string_view kSetRestoreSource =
      "UPDATE storage.storages SET source_uid = $2, source_snapshot_id = $3 WHERE storage_id = $1";
  tx.Exec(kSetRestoreSource, storage_id, source_uid, source_snapshot_id);
}

std::optional<StorageRow> Repository::GetStorageById(db::Tx& tx, const std::string& storage_id) {
  constexpr std::string_view kGetStorageById = GPUAAS_STORAGE_FROM "WHERE storage_id = $1";
  std::optional<db::Row> row = tx.Exec(kGetStorageById, storage_id).First();
  if (!row) return std::nullopt;
  return StorageFromRow(*row);
}

std::optional<StorageRow> Repository::GetStorage(db::Tx& tx, const std::string& tenant,
                                                 const std::string& storage_id, bool lock) {
  constexpr std::string_view kGetStorage =
      GPUAAS_STORAGE_FROM "WHERE storage_id = $1 AND ($2 = '' OR tenant_id = $2)";
  constexpr std::string_view kLockStorage =
      GPUAAS_STORAGE_FROM "WHERE storage_id = $1 AND ($2 = '' OR tenant_id = $2) FOR UPDATE";
  std::optional<db::Row> row =
      tx.Exec(lock ? kLockStorage : kGetStorage, storage_id, tenant).First();
  if (!row) return std::nullopt;
  return StorageFromRow(*row);
}

std::vector<pb::Storage> Repository::ListStorages(db::Tx& tx, const StorageFilter& f,
                                                  const service::PageRequest& page) {
  constexpr std::string_view kListStorages = GPUAAS_STORAGE_FROM
      "WHERE storage_id > $1 AND ($2 = '' OR tenant_id = $2) AND ($3 = '' OR spec_name = $3) "
      "AND ($4 = 0 OR state = $4) AND ($5 = '' OR name = $5) ORDER BY storage_id LIMIT $6";
  return tx.Exec(kListStorages, page.after, f.tenant, f.spec_name, f.state, f.name, page.limit)
      .Map([](const db::Row& r) { return StorageFromRow(r).storage; });
}

void Repository::UpdateStorage(db::Tx& tx, const pb::Storage& s) {
  constexpr std::string_view kUpdateStorage =
      "UPDATE storage.storages SET name = $2, spec_name = $3, size_bytes = $4, max_files = $5, "
      "update_time = now() WHERE storage_id = $1";
  tx.Exec(kUpdateStorage, s.storage_id(), s.name(), s.spec_name(), s.size_bytes(), s.max_files());
}

bool Repository::SetState(db::Tx& tx, const std::string& storage_id, pb::StorageState from,
                          pb::StorageState to) {
  constexpr std::string_view kSetState =
      "UPDATE storage.storages SET state = $3, update_time = now() "
      "WHERE storage_id = $1 AND state = $2";
  return tx.Exec(kSetState, storage_id, from, to).affected_rows() == 1;
}

bool Repository::DeleteStorage(db::Tx& tx, const std::string& storage_id) {
  constexpr std::string_view kDeleteStorage = "DELETE FROM storage.storages WHERE storage_id = $1";
  return tx.Exec(kDeleteStorage, storage_id).affected_rows() == 1;
}

std::vector<std::string> Repository::StoragesInState(db::Tx& tx, pb::StorageState state) {
  constexpr std::string_view kInState =
      "SELECT storage_id FROM storage.storages WHERE state = $1 ORDER BY storage_id";
  return tx.Exec(kInState, state).Map([](const db::Row& r) { return r.Get<std::string>(0); });
}

}  // namespace gpuaas::storage
