#include "services/storage/table_directory.h"

#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "services/storage/storage_rules.h"

namespace gpuaas::storage {
namespace {

s3::Bucket ToBucket(BucketRow row) {
  return s3::Bucket{.storage_id = std::move(row.storage_id),
                    .tenant_id = std::move(row.tenant_id),
                    .create_time = row.create_time,
                    .limits = {.max_bytes = row.size_bytes, .max_files = row.max_files},
                    .volume_id = std::move(row.storage_uid),
                    .backend_class = std::move(row.backend_class)};
}

}  // namespace

absl::StatusOr<s3::AccessKey> TableDirectory::FindAccessKey(std::string_view access_key_id) {
  // Anything not shaped like our keys is unknown without asking the database.
  if (!ValidateAccessKeyId("access_key_id", access_key_id).ok()) {
    return absl::NotFoundError("access key not found");
  }
  const std::string id(access_key_id);
  GPUAAS_ASSIGN_OR_RETURN(
      SealedKey key, pool_.Read<SealedKey>(
                         "storage.find_access_key", [&](db::Tx& tx) -> absl::StatusOr<SealedKey> {
                           std::optional<SealedKey> found = repo_.FindAccessKey(tx, id);
                           if (!found) return absl::NotFoundError("access key not found");
                           return *std::move(found);
                         }));
  absl::StatusOr<std::string> secret = box_.Open(key.secret_sealed, key.access_key_id);
  if (!secret.ok()) {
    Logger("storage")->error(
        "accessor {}: its sealed secret does not open ({}); is "
        "--secret-key-file the key it was sealed with?",
        key.access_key_id, secret.status().ToString());
    return secret.status();
  }
  return s3::AccessKey{.access_key_id = std::move(key.access_key_id),
                       .secret_key = *std::move(secret),
                       .grant = {.storage_id = std::move(key.storage_id),
                                 .tenant_id = std::move(key.tenant_id),
                                 .read_only = key.read_only},
                       .expire_time = key.expire_time};
}

absl::StatusOr<s3::Bucket> TableDirectory::FindBucket(std::string_view storage_id) {
  if (!ValidateStorageId("storage_id", storage_id).ok()) {
    return absl::NotFoundError("bucket not found");
  }
  const std::string id(storage_id);
  return pool_.Read<s3::Bucket>("storage.find_bucket",
                                [&](db::Tx& tx) -> absl::StatusOr<s3::Bucket> {
                                  std::optional<BucketRow> row = repo_.FindBucket(tx, id);
                                  if (!row) return absl::NotFoundError("bucket not found");
                                  return ToBucket(*std::move(row));
                                });
}

absl::StatusOr<std::vector<s3::Bucket>> TableDirectory::ListBuckets(std::string_view tenant_id) {
  const std::string tenant(tenant_id);
  return pool_.Read<std::vector<s3::Bucket>>(
      "storage.list_buckets", [&](db::Tx& tx) -> absl::StatusOr<std::vector<s3::Bucket>> {
        Repository::PlanForParameters(tx);
        std::vector<s3::Bucket> out;
        for (BucketRow& row : repo_.ListBuckets(tx, tenant))
          out.push_back(ToBucket(std::move(row)));
        return out;
      });
}

}  // namespace gpuaas::storage
