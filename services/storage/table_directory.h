// The S3 data plane's view of the control plane (s3::Directory) over the storage service's
// tables: accessor keys with their secrets opened from the sealed column, and READY storages as
// buckets. Each call reads the database, so a deleted accessor or a storage turning DELETING is
// refused on the next request. Thread-safe; every method blocks on PostgreSQL.
#pragma once

#include "libs/common/secret_box.h"
#include "libs/db/db.h"
#include "services/storage/repository.h"
#include "services/storage/s3/directory.h"

namespace gpuaas::storage {

class TableDirectory final : public s3::Directory {
 public:
  TableDirectory(db::Pool& pool, Repository& repo, const SecretBox& box)
      : pool_(pool), repo_(repo), box_(box) {}

  // NOT_FOUND for a malformed, unknown or deleted key, or one whose storage is not READY;
  // DATA_LOSS when its sealed secret does not open (another --secret-key-file).
  absl::StatusOr<s3::AccessKey> FindAccessKey(std::string_view access_key_id) override;
  absl::StatusOr<s3::Bucket> FindBucket(std::string_view storage_id) override;
  absl::StatusOr<std::vector<s3::Bucket>> ListBuckets(std::string_view tenant_id) override;

 private:
  db::Pool& pool_;
  Repository& repo_;
  const SecretBox& box_;
};

}  // namespace gpuaas::storage
