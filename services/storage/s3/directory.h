// What the S3 data plane needs to know from the control plane: accessor keys (with their
// secrets, which SigV4 needs on the server) and the storages that serve as buckets. The storage
// service implements it over its tables; the data plane never touches the database itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/authz/storage_access.h"
#include "services/storage/backend.h"

namespace gpuaas::storage::s3 {

struct AccessKey {
  std::string access_key_id;
  std::string secret_key;  // plain text, only in memory
  authz::StorageGrant grant;
  absl::Time expire_time = absl::InfiniteFuture();
};

// A storage seen as a bucket: named by its storage_id.
struct Bucket {
  std::string storage_id;
  std::string tenant_id;
  absl::Time create_time;
  VolumeLimits limits;
  // The backend's name for its volume: the storage's identity (storage_uid), never the
  // reusable storage_id.
  std::string volume_id;
  // The backend that holds it (the spec's backend class).
  std::string backend_class = "local";
};

// Thread-safe; called on every request, so revocations and deletions apply at once.
class Directory {
 public:
  virtual ~Directory() = default;
  // NOT_FOUND for an unknown or revoked key; an expired key is returned (the caller says why).
  virtual absl::StatusOr<AccessKey> FindAccessKey(std::string_view access_key_id) = 0;
  // NOT_FOUND for an unknown storage or one being deleted.
  virtual absl::StatusOr<Bucket> FindBucket(std::string_view storage_id) = 0;
  // The live storages of a tenant, by storage_id; every tenant's when tenant_id is empty (for
  // global roles).
  virtual absl::StatusOr<std::vector<Bucket>> ListBuckets(std::string_view tenant_id) = 0;
};

}  // namespace gpuaas::storage::s3
