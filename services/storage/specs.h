// Storage specs: platform admins define them, every role reads them. Plain C++ on API messages;
// the gRPC adapter (grpc_service.h) maps statuses, the repository holds the SQL.
//
// Every method blocks on PostgreSQL and returns INVALID_ARGUMENT naming the field,
// PERMISSION_DENIED when the caller may not write specs, NOT_FOUND, ALREADY_EXISTS,
// FAILED_PRECONDITION, or UNAVAILABLE when the database is down, as storage.proto documents.
#pragma once

#include "absl/status/status.h"
#include "gpuaas/storage/v1/storage.pb.h"
#include "libs/authz/principal.h"
#include "libs/db/db.h"
#include "services/storage/backends.h"
#include "services/storage/repository.h"

namespace gpuaas::storage {

class StorageSpecs final {
 public:
  StorageSpecs(db::Pool& pool, Repository& repo, const Backends& backends)
      : pool_(pool), repo_(repo), backends_(backends) {}

  // Idempotent by name: the same spec again (sizes compared by value) answers the stored one;
  // a different spec under a taken name is ALREADY_EXISTS.
  absl::Status CreateStorageSpec(const authz::Principal& p, const pb::CreateStorageSpecRequest& req,
                                 pb::StorageSpec& out);
  absl::Status GetStorageSpec(const authz::Principal& p, const pb::GetStorageSpecRequest& req,
                              pb::StorageSpec& out);
  absl::Status ListStorageSpecs(const authz::Principal& p, const pb::ListStorageSpecsRequest& req,
                                pb::ListStorageSpecsResponse& out);
  // Price and description only: a storage's size never changes under it.
  absl::Status UpdateStorageSpec(const authz::Principal& p, const pb::UpdateStorageSpecRequest& req,
                                 pb::StorageSpec& out);
  absl::Status DeleteStorageSpec(const authz::Principal& p, const pb::DeleteStorageSpecRequest& req,
                                 pb::DeleteStorageSpecResponse& out);

 private:
  db::Pool& pool_;
  Repository& repo_;
  const Backends& backends_;
};

}  // namespace gpuaas::storage
