// Attachments: which instance mounts which storage on which node. The instance service makes
// them when it starts an instance and removes them when it stops it. A storage has at most one
// read-write attachment (two writers through two mounts would see each other's half-written
// files) and any number of read-only ones; both calls are idempotent so the instance
// service's reconciler may repeat them after any failure.
//
// Every method blocks on PostgreSQL (and the backend) and returns the errors storage.proto
// documents for its RPC.
#pragma once

#include "absl/status/status.h"
#include "gpuaas/storage/v1/storage.pb.h"
#include "libs/authz/principal.h"
#include "libs/db/db.h"
#include "services/storage/backends.h"
#include "services/storage/repository.h"

namespace gpuaas::storage {

class Attachments final {
 public:
  Attachments(db::Pool& pool, Repository& repo, const Backends& backends)
      : pool_(pool), repo_(repo), backends_(backends) {}

  absl::Status AttachStorage(const authz::Principal& p, const pb::AttachStorageRequest& req,
                             pb::Attachment& out);
  // After a read-write detach the volume's usage is recounted (Backend::Recount); a failed
  // recount is logged, not returned: the detach itself is done.
  absl::Status DetachStorage(const authz::Principal& p, const pb::DetachStorageRequest& req,
                             pb::DetachStorageResponse& out);

 private:
  db::Pool& pool_;
  Repository& repo_;
  const Backends& backends_;
};

}  // namespace gpuaas::storage
