// The API's SQL: instances as users see them, their events and usage. (Images are in
// repository_images.h, the reconciler's statements in repository_reconcile.h.)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/db/db.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

struct InstanceRow {
  pb::Instance instance;
  std::string request_hash;
  bool deleted = false;  // a tombstone
};

namespace repo {

std::optional<InstanceRow> GetInstance(db::Tx& tx, const std::string& instance_id);
// Locked FOR UPDATE.
std::optional<InstanceRow> LockInstance(db::Tx& tx, const std::string& instance_id);
// What a new instance keeps beside its Instance message: its image's registry login (sealed for
// the instance: registry_secrets.h), its limits and its egress policy, for its workloads.
struct InstanceRunSettings {
  std::string registry_secret;
  pb::WorkloadLimits limits;
  bool deny_egress = false;
};
// Inserts a new instance, desired RUNNING and PENDING, and returns it as stored (revision, times).
InstanceRow InsertInstance(db::Tx& tx, const pb::Instance& i, const InstanceRunSettings& run,
                           const std::string& request_hash);
// The newest `limit` events, oldest first.
std::vector<pb::Event> Events(db::Tx& tx, const std::string& instance_id, int limit);
// `tenant` "" for every tenant; ordered by instance_id after `after`.
std::vector<pb::Instance> ListInstances(db::Tx& tx, const std::string& tenant, pb::State state,
                                        const std::string& spec_name, const std::string& after,
                                        int limit);
// The highest revision below which every change that will ever commit is visible to the
// transaction's next statement (0003_revision_horizon.sql): what a list reports and how far a
// watch may go. `drawn`, when given, gets the highest revision drawn, committed or not.
int64_t RevisionHorizon(db::Tx& tx, int64_t* drawn = nullptr);
// Instances (tombstones too) changed after revision `after` up to `horizon`, oldest change
// first.
std::vector<InstanceRow> Changes(db::Tx& tx, const std::string& tenant, int64_t after,
                                 int64_t horizon, int limit);
// The highest revision a purged tombstone had: watches must resume after it.
int64_t PurgedRevision(db::Tx& tx);

// Start: desired RUNNING, state PENDING, a new run. Stop/delete: the desired state only.
void MarkStart(db::Tx& tx, const std::string& instance_id);
void SetDesired(db::Tx& tx, const std::string& instance_id, pb::DesiredState desired);

// The tenant's quota lock, held until the transaction ends. Take it in a statement of its own
// before ReadTenantUsage: a statement sees what committed before it began, and only a statement
// that begins once the lock is held sees every create and start of the tenant before it.
void LockTenant(db::Tx& tx, const std::string& tenant);

// What the quota check of a create or start of `instance_id` reads, in one statement.
struct TenantUsage {
  int64_t instances = 0;  // the tenant's, not deleted
  // GPUs the tenant's instances hold or are being given: desired RUNNING and not FAILED (a
  // failed run holds nothing), leaving out `instance_id`'s own (the instance being started).
  int64_t gpus = 0;
  // `instance_id`'s request hash when the id is taken, by any tenant, tombstones too (a create's
  // retry, or a taken id).
  std::optional<std::string> taken_by;
};
TenantUsage ReadTenantUsage(db::Tx& tx, const std::string& tenant, const std::string& instance_id);

// Usage records overlapping [start, end), clipped; `tenant` "" for all; after `after_id`.
std::vector<pb::UsageRecord> ListUsage(db::Tx& tx, const std::string& tenant,
                                       const std::string& instance_id, absl::Time start,
                                       absl::Time end, int64_t after_id, int limit);
std::vector<pb::UsageTotal> UsageTotals(db::Tx& tx, const std::string& tenant,
                                        const std::string& instance_id, absl::Time start,
                                        absl::Time end);

}  // namespace repo
}  // namespace gpuaas::instance
