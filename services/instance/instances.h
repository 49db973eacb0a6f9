// The InstanceService and ImageService methods (instance.proto): the rows the user's intent
// writes. Where an instance is (state, node, ports) is the reconciler's to write; creates,
// starts, stops and deletes only set the desired state and hand the row over (needs_work), and
// the reconciler is kicked in-process and through NOTIFY instance_work (the table's trigger).
//
// Lookups in other services (the spec in stock, the storage, the tenant's quota in auth) run
// with the caller's own token, before the transaction: no network call holds a row lock. A
// create makes its lookups at once and waits for the slowest, and keeps specs and tenants'
// quotas a few seconds per replica (CreateInstance says what that allows).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/authz/principal.h"
#include "libs/client/auth_client.h"
#include "libs/client/stock_client.h"
#include "libs/client/storage_client.h"
#include "libs/common/clock.h"
#include "libs/db/db.h"
#include "services/instance/images.h"
#include "services/instance/lookup_cache.h"
#include "services/instance/repository_instances.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

struct Peers {
  client::AuthClient& auth;
  client::StockClient& stock;
  client::StorageClient& storage;
};

struct InstancesOptions {
  // How long CreateInstance uses a spec or a tenant's quota it read again (see there); zero
  // reads them for every create.
  absl::Duration lookup_cache_ttl = absl::Seconds(2);
  // Specs, and tenants, kept at most (each).
  size_t lookup_cache_capacity = 4096;
  // The caches' clock; nullptr for the system clock. Not owned.
  const Clock* clock = nullptr;
};

class Instances final {
 public:
  // `on_work` (may be empty) runs after a commit that gave the reconciler work. `images`
  // resolves the image a create names; it must outlive this.
  Instances(db::Pool& pool, Peers peers, Images& images, std::function<void()> on_work,
            InstancesOptions options = {});

  // Reads the spec, the storage (when named) and the tenant's quota at once, then inserts the
  // instance under the tenant's quota lock. A spec (not deprecated) and a tenant's quota, once
  // read, serve this replica's creates for `lookup_cache_ttl`, to callers who could read them
  // themselves (any role reads specs; a tenant's quota, its members and the global roles). So
  // for that long after a change a create may still see the old value: a spec deprecated or
  // deleted, a tenant deleted, or a quota lowered. Refusals always stand on fresh answers: a
  // deprecated spec is read again, and a create the cached quota refuses is checked again
  // against a fresh one, so a quota raised takes effect at once. Storages are never cached.
  // StartInstance always reads the quota afresh.
  absl::Status CreateInstance(const authz::Principal& p, const client::CallerCredentials& caller,
                              const pb::CreateInstanceRequest& req, pb::Instance& out);
  absl::Status GetInstance(const authz::Principal& p, const pb::GetInstanceRequest& req,
                           pb::Instance& out);
  absl::Status ListInstances(const authz::Principal& p, const pb::ListInstancesRequest& req,
                             pb::ListInstancesResponse& out);
  absl::Status StartInstance(const authz::Principal& p, const client::CallerCredentials& caller,
                             const pb::StartInstanceRequest& req, pb::Instance& out);
  absl::Status StopInstance(const authz::Principal& p, const pb::StopInstanceRequest& req,
                            pb::Instance& out);
  absl::Status DeleteInstance(const authz::Principal& p, const pb::DeleteInstanceRequest& req,
                              pb::Instance& out);
  absl::Status ListUsage(const authz::Principal& p, const pb::ListUsageRequest& req,
                         pb::ListUsageResponse& out);

 private:
  // The tenant's quota check for instance `instance_id` to run `gpus` GPUs (and, when
  // `new_instance`, to be one more instance), under the tenant's advisory lock in `tx`.
  absl::Status CheckQuota(db::Tx& tx, const std::string& tenant, const auth::v1::Quota& quota,
                          const std::string& instance_id, int gpus, bool new_instance);
  // The tenant's quota from the auth service (and into the cache).
  absl::StatusOr<auth::v1::Quota> ReadQuota(const std::string& tenant,
                                            const client::CallerCredentials& caller);
  // GetTenant's answer `t` as a quota, kept in the cache.
  absl::StatusOr<auth::v1::Quota> KeepQuota(const absl::StatusOr<auth::v1::Tenant>& t,
                                            const std::string& tenant);
  // The image a create names (the tenant's own, else the catalog's; none: nothing to do) fills
  // `effective`'s gaps; `image` gets it, with its registry login.
  absl::Status ApplyRequestedImage(const pb::CreateInstanceRequest& req, const std::string& tenant,
                                   pb::Template& effective, ResolvedImage& image);

  struct CreateLookups;
  // The spec, storage and quota lookups of a create, started at once; cached answers where
  // the caller may have them.
  CreateLookups StartCreateLookups(const authz::Principal& p,
                                   const client::CallerCredentials& caller,
                                   const std::string& tenant, const pb::CreateInstanceRequest& req);
  absl::StatusOr<stock::v1::Spec> AwaitSpec(CreateLookups& lookups, const std::string& spec_name);
  absl::StatusOr<auth::v1::Quota> AwaitQuota(CreateLookups& lookups, const std::string& tenant);
  // The create's transaction: `out` is the new instance, or a retry's; `created` says which.
  absl::Status InsertNew(const pb::Instance& instance, const repo::InstanceRunSettings& run,
                         const std::string& fingerprint, const auth::v1::Quota& quota,
                         pb::Instance& out, bool& created);
  // Sets the desired state of the caller's instance; `change` decides from the row. NOT_FOUND
  // for another tenant's, missing or deleted instances.
  absl::Status SetDesired(const authz::Principal& p, const std::string& instance_id,
                          const std::function<absl::Status(db::Tx&, const pb::Instance&)>& change,
                          pb::Instance& out);

  db::Pool& pool_;
  Peers peers_;
  Images& images_;
  std::function<void()> on_work_;
  LookupCache<stock::v1::Spec> specs_;   // by spec name
  LookupCache<auth::v1::Quota> quotas_;  // by tenant id
};

}  // namespace gpuaas::instance
