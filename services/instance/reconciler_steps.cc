// The reconciler's steps: each reads the row, makes at most one kind of call to another
// service (idempotent there: by instance_id), and writes what came of it.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "libs/common/logging.h"
#include "services/instance/reconciler.h"

namespace gpuaas::instance {
namespace {

namespace stockpb = ::gpuaas::stock::v1;
namespace storagepb = ::gpuaas::storage::v1;
namespace authpb = ::gpuaas::auth::v1;

// One environment value is at most 128 KiB (MAX_ARG_STRLEN); the keys take half of that.
constexpr size_t kMaxAuthorizedKeysBytes = 64 << 10;

// Codes that say the request cannot succeed as it is: retrying would not help.
bool IsPermanent(const absl::Status& s) {
  return absl::IsNotFound(s) || absl::IsFailedPrecondition(s) || absl::IsInvalidArgument(s);
}

}  // namespace

absl::StatusOr<client::CallContext> Reconciler::Call() {
  absl::StatusOr<std::string> token = deps_.tokens.Get();
  if (!token.ok()) return token.status();
  client::CallContext call;
  call.set_bearer_token(*token).set_timeout(options_.call_timeout);
  return call;
}

void Reconciler::NoteCallError(const absl::Status& status) {
  if (absl::IsUnauthenticated(status)) deps_.tokens.Invalidate();
}

Reconciler::Outcome Reconciler::RunStep(db::Tx& tx, const WorkRow& row, Step step,
                                        absl::Status& why) {
  switch (step) {
    case Step::kBegin:
      repo_.BeginRun(tx, row);
      return Outcome::kDone;
    case Step::kClaim:
      return Claim(tx, row, why);
    case Step::kAttach:
      return Attach(tx, row, why);
    case Step::kPublish:
      return Publish(tx, row, why);
    case Step::kMeter:
      return Meter(tx, row, why);
    case Step::kUnpublish:
      return Unpublish(tx, row);
    case Step::kMeterClose:
      repo_.CloseUsage(tx, row.instance_id);
      return Outcome::kDone;
    case Step::kDetach:
      return Detach(tx, row, why);
    case Step::kRelease:
      return Release(tx, row, why);
    case Step::kFinish:
      if (row.desired == pb::DESIRED_STATE_DELETED) {
        repo_.Tombstone(tx, row.instance_id);
      } else {
        repo_.SetStopped(tx, row.instance_id);
      }
      return Outcome::kDone;
    case Step::kWait:
      return Outcome::kDone;
  }
  return Outcome::kDone;
}

Reconciler::Outcome Reconciler::Claim(db::Tx& tx, const WorkRow& row, absl::Status& why) {
  absl::StatusOr<client::CallContext> call = Call();
  if (!call.ok()) {
    why = call.status();
    return Outcome::kRetry;
  }
  stockpb::ClaimStockRequest req;
  req.set_spec_name(row.spec_name);
  req.set_instance_id(row.instance_id);
  absl::StatusOr<stockpb::Stock> stock = deps_.stock.ClaimStock(req, *call);
  if (stock.ok()) {
    std::vector<std::string> uuids(stock->gpu_uuids().begin(), stock->gpu_uuids().end());
    repo_.SetClaimed(tx, row.instance_id, stock->stock_id(), stock->node_id(), uuids,
                     stock->mig_partition());
    return Outcome::kDone;
  }
  if (absl::IsResourceExhausted(stock.status())) {
    if (row.attempts < options_.no_capacity_retries) {
      why = stock.status();
      return Outcome::kRetry;
    }
    repo_.Fail(tx, row.instance_id, pb::REASON_NO_CAPACITY, std::string(stock.status().message()));
    return Outcome::kDone;
  }
  if (IsPermanent(stock.status())) {
    repo_.Fail(tx, row.instance_id, pb::REASON_SPEC_ERROR, std::string(stock.status().message()));
    return Outcome::kDone;
  }
  NoteCallError(stock.status());
  why = stock.status();
  return Outcome::kRetry;
}

Reconciler::Outcome Reconciler::Attach(db::Tx& tx, const WorkRow& row, absl::Status& why) {
  absl::StatusOr<client::CallContext> call = Call();
  if (!call.ok()) {
    why = call.status();
    return Outcome::kRetry;
  }
  storagepb::AttachStorageRequest req;
  req.set_storage_id(row.storage_id);
  // The storage service mounts only the instance's tenant's storage of the identity bound at
  // create, checked at every start: the id may have passed to another storage since.
  req.set_tenant_id(row.tenant_id);
  req.set_storage_uid(row.storage_uid);
  req.set_instance_id(row.instance_id);
  req.set_node_id(row.node_id);
  // Read-write only when some volume writes: any number of instances may read a storage.
  req.set_read_only(std::all_of(row.tmpl.volumes().begin(), row.tmpl.volumes().end(),
                                [](const pb::Volume& v) { return v.read_only(); }));
  absl::StatusOr<storagepb::Attachment> attached = deps_.storage.AttachStorage(req, *call);
  if (attached.ok()) {
    const storagepb::MountSource& source = attached->mount_source();
    if (!source.ceph().client_id().empty()) {
      // The agent mounts it; the key is its own to fetch (GetMountCredential), never stored.
      pb::CephVolume ceph;
      ceph.set_storage_id(row.storage_id);
      *ceph.mutable_monitors() = source.ceph().monitors();
      ceph.set_fs_name(source.ceph().fs_name());
      ceph.set_path(source.ceph().path());
      ceph.set_client_id(source.ceph().client_id());
      repo_.SetAttached(tx, row.instance_id, "", attached->storage_uid(), &ceph);
      return Outcome::kDone;
    }
    if (source.host_path().empty()) {
      repo_.Fail(tx, row.instance_id, pb::REASON_STORAGE_ERROR,
                 absl::StrCat("storage ", row.storage_id, " has no host path to mount"));
      return Outcome::kDone;
    }
    repo_.SetAttached(tx, row.instance_id, source.host_path(), attached->storage_uid());
    return Outcome::kDone;
  }
  if (absl::IsNotFound(attached.status())) {
    repo_.Fail(tx, row.instance_id, pb::REASON_STORAGE_ERROR,
               absl::StrCat("storage ", row.storage_id,
                            " not found: the storage this instance was created with is gone"));
    return Outcome::kDone;
  }
  if (IsPermanent(attached.status())) {
    repo_.Fail(tx, row.instance_id, pb::REASON_STORAGE_ERROR,
               std::string(attached.status().message()));
    return Outcome::kDone;
  }
  NoteCallError(attached.status());
  why = attached.status();
  return Outcome::kRetry;
}

Reconciler::Outcome Reconciler::Publish(db::Tx& tx, const WorkRow& row, absl::Status& why) {
  absl::StatusOr<client::CallContext> call = Call();
  if (!call.ok()) {
    why = call.status();
    return Outcome::kRetry;
  }
  authpb::ListAuthorizedKeysRequest req;
  req.set_tenant_id(row.tenant_id);
  absl::StatusOr<authpb::ListAuthorizedKeysResponse> keys =
      deps_.auth.ListAuthorizedKeys(req, *call);
  if (!keys.ok() && !absl::IsNotFound(keys.status())) {
    // Not started without them: a member would find its key refused with no reason given.
    NoteCallError(keys.status());
    why = keys.status();
    return Outcome::kRetry;
  }
  // A tenant gone (NOT_FOUND) has no keys; its instances are on their way out.
  const authpb::ListAuthorizedKeysResponse listed =
      keys.ok() ? *keys : authpb::ListAuthorizedKeysResponse();
  std::string lines;
  int left_out = 0;
  for (const authpb::AuthorizedKey& k : listed.keys()) {
    if (lines.size() + k.public_key().size() + 1 > kMaxAuthorizedKeysBytes) {
      ++left_out;
      continue;
    }
    absl::StrAppend(&lines, k.public_key(), "\n");
  }
  if (left_out > 0) {
    Logger("instance")
        ->warn("instance {}: {} of its tenant's SSH keys left out (over {} bytes)", row.instance_id,
               left_out, kMaxAuthorizedKeysBytes);
  }
  repo_.Publish(tx, row.instance_id, row.node_id, lines);
  return Outcome::kDone;
}

Reconciler::Outcome Reconciler::Meter(db::Tx& tx, const WorkRow& row, absl::Status& why) {
  absl::StatusOr<client::CallContext> call = Call();
  if (!call.ok()) {
    why = call.status();
    return Outcome::kRetry;
  }
  stockpb::GetSpecRequest req;
  req.set_spec_name(row.spec_name);
  absl::StatusOr<stockpb::Spec> spec = deps_.stock.GetSpec(req, *call);
  int64_t micros_per_hour = 0;
  std::string currency;
  if (spec.ok()) {
    micros_per_hour = spec->price().micros_per_hour();
    currency = spec->price().currency();
  } else if (absl::IsNotFound(spec.status())) {
    // A spec cannot go while stocks of it exist; should it be gone anyway, the time is still
    // recorded, unpriced.
    Logger("instance")
        ->error("instance {}: spec {} is gone; its usage is recorded at no price", row.instance_id,
                row.spec_name);
  } else {
    NoteCallError(spec.status());
    why = spec.status();
    return Outcome::kRetry;
  }
  // A workload already gone gets its whole interval at once.
  const bool close = !row.published || IsWorkloadGone(row.workload_state);
  repo_.OpenUsage(tx, row.instance_id, micros_per_hour, currency, close);
  return Outcome::kDone;
}

Reconciler::Outcome Reconciler::Unpublish(db::Tx& tx, const WorkRow& row) {
  pb::State state = row.state;
  pb::Reason reason = row.reason;
  std::string message = row.message;
  if (row.desired == pb::DESIRED_STATE_DELETED) {
    state = pb::STATE_DELETING;
  } else if (row.desired == pb::DESIRED_STATE_STOPPED &&
             (IsLiveState(row.state) ||
              (row.state == pb::STATE_STOPPING && reason == pb::REASON_UNSPECIFIED))) {
    state = pb::STATE_STOPPING;
    reason = pb::REASON_USER_REQUEST;
    message.clear();
  }
  repo_.Unpublish(tx, row.instance_id, state, reason, message);
  return Outcome::kDone;
}

Reconciler::Outcome Reconciler::Detach(db::Tx& tx, const WorkRow& row, absl::Status& why) {
  if (row.storage_id.empty()) {
    repo_.SetDetached(tx, row.instance_id);
    return Outcome::kDone;
  }
  absl::StatusOr<client::CallContext> call = Call();
  if (!call.ok()) {
    why = call.status();
    return Outcome::kRetry;
  }
  storagepb::DetachStorageRequest req;
  req.set_storage_id(row.storage_id);
  req.set_instance_id(row.instance_id);
  absl::StatusOr<storagepb::DetachStorageResponse> detached =
      deps_.storage.DetachStorage(req, *call);
  // A storage deleted since holds no attachment either.
  if (detached.ok() || absl::IsNotFound(detached.status())) {
    repo_.SetDetached(tx, row.instance_id);
    return Outcome::kDone;
  }
  NoteCallError(detached.status());
  why = detached.status();
  return Outcome::kRetry;
}

Reconciler::Outcome Reconciler::Release(db::Tx& tx, const WorkRow& row, absl::Status& why) {
  absl::StatusOr<client::CallContext> call = Call();
  if (!call.ok()) {
    why = call.status();
    return Outcome::kRetry;
  }
  stockpb::ReleaseStockRequest req;
  req.set_instance_id(row.instance_id);
  absl::StatusOr<stockpb::ReleaseStockResponse> released = deps_.stock.ReleaseStock(req, *call);
  if (!released.ok()) {
    NoteCallError(released.status());
    why = released.status();
    return Outcome::kRetry;
  }
  repo_.SetReleased(tx, row.instance_id);
  return Outcome::kDone;
}

}  // namespace gpuaas::instance
