// Accessors, and the buckets and keys the S3 data plane reads through the Directory.
#include "libs/common/proto_time.h"
#include "services/storage/repository.h"

namespace gpuaas::storage {
namespace {

// clang-format off
#define GPUAAS_ACCESSOR_FROM                                                                 \
  "SELECT access_key_id, storage_id, tenant_id, read_only, description, creator, "          \
  GPUAAS_SQL_MICROS("expire_time") ", " GPUAAS_SQL_MICROS("create_time")                    \
  " FROM storage.accessors "
#define GPUAAS_BUCKET_FROM                                                                   \
  "SELECT storage_id, tenant_id, " GPUAAS_SQL_MICROS("create_time") ", size_bytes, max_files, " \
  "storage_uid, backend_class FROM storage.storages "
// clang-format on

pb::Accessor AccessorFromRow(const db::Row& r) {
  pb::Accessor a;
  a.set_access_key_id(r.Get<std::string>(0));
  a.set_storage_id(r.Get<std::string>(1));
  a.set_tenant_id(r.Get<std::string>(2));
  a.set_read_only(r.Get<bool>(3));
  a.set_description(r.Get<std::string>(4));
  a.set_creator(r.Get<std::string>(5));
  *a.mutable_expire_time() = ToProtoTime(r.GetTime(6));
  *a.mutable_create_time() = ToProtoTime(r.GetTime(7));
  return a;
}

BucketRow BucketFromRow(const db::Row& r) {
  return BucketRow{.storage_id = r.Get<std::string>(0),
                   .tenant_id = r.Get<std::string>(1),
                   .create_time = r.GetTime(2),
                   .size_bytes = r.Get<int64_t>(3),
                   .max_files = r.Get<int64_t>(4),
                   .storage_uid = r.Get<std::string>(5),
                   .backend_class = r.Get<std::string>(6)};
}

}  // namespace

void Repository::InsertAccessor(db::Tx& tx, const pb::Accessor& a,
                                const std::string& secret_sealed) {
  constexpr std::string_view kInsertAccessor =
      "INSERT INTO storage.accessors (access_key_id, storage_id, tenant_id, read_only, "
      "description, creator, secret_sealed, expire_time) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7, " GPUAAS_SQL_FROM_MICROS("$8") ")";
  tx.Exec(kInsertAccessor, a.access_key_id(), a.storage_id(), a.tenant_id(), a.read_only(),
          a.description(), a.creator(), db::Bytes{secret_sealed}, FromProtoTime(a.expire_time()));
}

std::optional<pb::Accessor> Repository::GetAccessor(db::Tx& tx, const std::string& tenant,
                                                    const std::string& access_key_id) {
  constexpr std::string_view kGetAccessor =
      GPUAAS_ACCESSOR_FROM "WHERE access_key_id = $1 AND ($2 = '' OR tenant_id = $2)";
  std::optional<db::Row> row = tx.Exec(kGetAccessor, access_key_id, tenant).First();
  if (!row) return std::nullopt;
  return AccessorFromRow(*row);
}

std::vector<pb::Accessor> Repository::ListAccessors(db::Tx& tx, const std::string& tenant,
                                                    const std::string& storage_id,
                                                    const service::PageRequest& page) {
  constexpr std::string_view kListAccessors = GPUAAS_ACCESSOR_FROM
      "WHERE storage_id = $1 AND ($2 = '' OR tenant_id = $2) AND access_key_id > $3 "
      "ORDER BY access_key_id LIMIT $4";
  return tx.Exec(kListAccessors, storage_id, tenant, page.after, page.limit).Map(AccessorFromRow);
}

bool Repository::DeleteAccessor(db::Tx& tx, const std::string& tenant,
                                const std::string& storage_id, const std::string& access_key_id) {
  constexpr std::string_view kDeleteAccessor =
      "DELETE FROM storage.accessors WHERE access_key_id = $1 AND ($2 = '' OR tenant_id = $2) "
      "AND ($3 = '' OR storage_id = $3)";
  return tx.Exec(kDeleteAccessor, access_key_id, tenant, storage_id).affected_rows() == 1;
}

std::optional<SealedKey> Repository::FindAccessKey(db::Tx& tx, const std::string& access_key_id) {
  // The tenant comes from the storage row, which the key cannot outlive (ON DELETE CASCADE);
  // a storage being deleted takes its keys out of service at once.
  constexpr std::string_view kFindAccessKey =
      "SELECT a.access_key_id, a.secret_sealed, s.storage_id, s.tenant_id, a.read_only, "
      GPUAAS_SQL_MICROS("a.expire_time") " FROM storage.accessors a "
      "JOIN storage.storages s ON s.storage_id = a.storage_id AND s.tenant_id = a.tenant_id "
      "WHERE a.access_key_id = $1 AND s.state = 2";
  std::optional<db::Row> row = tx.Exec(kFindAccessKey, access_key_id).First();
  if (!row) return std::nullopt;
  return SealedKey{.access_key_id = row->Get<std::string>(0),
                   .secret_sealed = row->GetBytes(1),
                   .storage_id = row->Get<std::string>(2),
                   .tenant_id = row->Get<std::string>(3),
                   .read_only = row->Get<bool>(4),
                   .expire_time = row->GetTime(5)};
}

std::optional<BucketRow> Repository::FindBucket(db::Tx& tx, const std::string& storage_id) {
  constexpr std::string_view kFindBucket = GPUAAS_BUCKET_FROM "WHERE storage_id = $1 AND state = 2";
  std::optional<db::Row> row = tx.Exec(kFindBucket, storage_id).First();
  if (!row) return std::nullopt;
  return BucketFromRow(*row);
}

std::vector<BucketRow> Repository::ListBuckets(db::Tx& tx, const std::string& tenant) {
  constexpr std::string_view kListBuckets =
      GPUAAS_BUCKET_FROM "WHERE ($1 = '' OR tenant_id = $1) AND state = 2 ORDER BY storage_id";
  return tx.Exec(kListBuckets, tenant).Map(BucketFromRow);
}

}  // namespace gpuaas::storage
