// Accessors: S3 key pairs scoped to one storage, for moving data without a GPU instance (the
// AWS CLI, rclone, boto3, presigned links). The secret is returned once and kept only sealed
// (secret_box.h); the S3 data plane reads keys back through the Directory
// (table_directory.h), so a deleted accessor or a storage being deleted stops working at once.
//
// Every method blocks on PostgreSQL and returns the errors storage.proto documents for its RPC.
#pragma once

#include "absl/status/status.h"
#include "gpuaas/storage/v1/storage.pb.h"
#include "libs/authz/principal.h"
#include "libs/common/clock.h"
#include "libs/common/secret_box.h"
#include "libs/db/db.h"
#include "libs/service/request_log.h"
#include "services/storage/repository.h"

namespace gpuaas::storage {

class Accessors final {
 public:
  // `clock` sets expiry times; it and `box` must outlive this.
  Accessors(db::Pool& pool, Repository& repo, const SecretBox& box, const Clock& clock)
      : pool_(pool), repo_(repo), box_(box), clock_(clock) {}

  // Idempotent by request_id: a retry answers the accessor without its secret.
  absl::Status CreateAccessor(const authz::Principal& p, const pb::CreateAccessorRequest& req,
                              pb::CreateAccessorResponse& out);
  absl::Status ListAccessors(const authz::Principal& p, const pb::ListAccessorsRequest& req,
                             pb::ListAccessorsResponse& out);
  absl::Status DeleteAccessor(const authz::Principal& p, const pb::DeleteAccessorRequest& req,
                              pb::DeleteAccessorResponse& out);

 private:
  db::Pool& pool_;
  Repository& repo_;
  const SecretBox& box_;
  const Clock& clock_;
  service::RequestLog log_{"storage"};
};

}  // namespace gpuaas::storage
