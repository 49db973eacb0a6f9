// Attachments: which instance mounts which storage on which node. The instance service makes
// them when it starts an instance and removes them when it stops it. A storage has at most one
// read-write attachment (two writers through two mounts would see each other's half-written
// files) and any number of read-only ones; both calls are idempotent so the instance
// service's reconciler may repeat them after any failure.
//
// A backend whose mounts need a credential (ceph: a cephx id per attachment that reaches that
// one volume) makes it at attach and revokes it at detach; the answer names the id, never its
// secret, since the instance service stores attachments. The node's agent fetches the secret
// itself with GetMountCredential, which only the attachment's node may call.
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
  // The backend's credential is revoked at every detach of the pair, a retry included, so a
  // failed revoke (UNAVAILABLE) is retried with the detach.
  absl::Status DetachStorage(const authz::Principal& p, const pb::DetachStorageRequest& req,
                             pb::DetachStorageResponse& out);
  // The secret of an attachment's mount credential, for its node's agent (authz:
  // AuthorizeMountCredential). FAILED_PRECONDITION when the backend's mounts need none. The
  // storage's row stays locked while the backend answers, so a detach cannot slip between the
  // check and the grant.
  absl::Status GetMountCredential(const authz::Principal& p,
                                  const pb::GetMountCredentialRequest& req,
                                  pb::MountCredential& out);

 private:
  db::Pool& pool_;
  Repository& repo_;
  const Backends& backends_;
};

}  // namespace gpuaas::storage
