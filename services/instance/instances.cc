#include "services/instance/instances.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "libs/authz/roles.h"
#include "libs/authz/tenant_scope.h"
#include "libs/common/ids.h"
#include "libs/common/proto_time.h"
#include "libs/common/quantity.h"
#include "libs/common/status_macros.h"
#include "libs/service/paging.h"
#include "libs/service/request_log.h"
#include "libs/service/validate.h"
#include "services/instance/instance_rules.h"

namespace gpuaas::instance {
namespace {

constexpr int kEventsShown = 50;

absl::Status InstanceNotFound() { return absl::NotFoundError("instance not found"); }

// A lookup's failure as this API reports it: what the caller named is "not found" under the
// field's name; anything else passes through.
absl::Status Named(absl::Status s, std::string_view field, std::string_view value) {
  if (absl::IsNotFound(s) || absl::IsPermissionDenied(s)) {
    return absl::NotFoundError(
        absl::StrCat(std::string(field), ": ", std::string(value), " not found"));
  }
  return s;
}

// Another tenant's instance does not exist, for tenant roles.
bool Visible(const authz::Principal& p, const InstanceRow& row) {
  absl::StatusOr<std::string> scope = authz::TenantScope(p);
  return scope.ok() && !row.deleted && (scope->empty() || *scope == row.instance.tenant_id());
}

const Clock& DefaultClock() {
  static const SystemClock clock;
  return clock;
}

// Who the lookup caches may answer: exactly who the service behind them would, so a cached
// answer never reaches a caller that could not have read it itself. These mirror the other
// services' rules and must follow them: stock's GetSpec lets any role read any spec
// (services/stock/specs.cc); auth's GetTenant lets a tenant's reading roles and the global roles
// read the tenant (services/auth/auth_tenants.cc). Anyone else goes to the service and hears
// its answer.
bool MayReadSpecs(const authz::Principal& p) {
  return authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED).ok();
}
bool MayReadTenant(const authz::Principal& p, const std::string& tenant) {
  return authz::RequireTenant(p, tenant, "tenant").ok() && p.Has(authz::Power::kRead);
}

// RESOURCE_EXHAUSTED naming the quota that `gpus` more GPUs (and, when `new_instance`, one more
// instance) on top of `usage` would exceed.
absl::Status QuotaAllows(const std::string& tenant, const auth::v1::Quota& quota,
                         const repo::TenantUsage& usage, int gpus, bool new_instance) {
  if (new_instance && usage.instances + 1 > quota.max_instances()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "quota max_instances: tenant ", tenant, " may have ", quota.max_instances(), " instances"));
  }
  if (usage.gpus + gpus > quota.max_gpus()) {
    return absl::ResourceExhaustedError(absl::StrCat("quota max_gpus: tenant ", tenant, " may run ",
                                                     quota.max_gpus(), " GPUs at once"));
  }
  return absl::OkStatus();
}

// The storage a create names, as GetStorage answered: the tenant's own and READY. Its
// identity, which the instance is bound to.
absl::StatusOr<std::string> CheckStorage(const absl::StatusOr<storage::v1::Storage>& storage,
                                         const std::string& tenant, const std::string& storage_id) {
  if (!storage.ok()) return Named(storage.status(), "storage_id", storage_id);
  if (storage->tenant_id() != tenant) {
    return absl::NotFoundError(absl::StrCat("storage_id: ", storage_id, " not found"));
  }
  if (storage->state() != storage::v1::STORAGE_STATE_READY) {
    return absl::FailedPreconditionError(absl::StrCat("storage_id: ", storage_id, " is not READY"));
  }
  return storage->storage_uid();
}

// The instance a create stores.
pb::Instance NewInstance(const pb::CreateInstanceRequest& req, const std::string& tenant,
                         const stock::v1::Spec& spec, const pb::Template& effective,
                         const pb::Image& image, const std::string& storage_uid) {
  pb::Instance instance;
  instance.set_instance_id(req.instance_id().empty() ? "i" + NewId("").substr(0, 20)
                                                     : req.instance_id());
  instance.set_tenant_id(tenant);
  instance.set_name(req.name());
  instance.set_spec_name(req.spec_name());
  instance.set_gpu_num(spec.gpu_num());
  if (!image.name().empty()) instance.set_image(absl::StrCat(image.name(), ":", image.version()));
  instance.set_image_reference(image.oci_digest_reference());
  instance.set_storage_id(req.storage_id());
  instance.set_storage_uid(storage_uid);
  *instance.mutable_template_() = effective;
  if (req.has_idle_timeout()) *instance.mutable_idle_timeout() = req.idle_timeout();
  if (req.has_max_run_time()) *instance.mutable_max_run_time() = req.max_run_time();
  return instance;
}

// What the spec gives a workload: its cpu, memory and disk (pids and open files are the
// service's, added to each workload: reconciler_plan.h). A spec the stock service holds parses;
// a part that does not is left to the runtime's default rather than failing the create.
pb::WorkloadLimits SpecLimits(const stock::v1::Spec& spec) {
  pb::WorkloadLimits limits;
  if (absl::StatusOr<int64_t> cpu = ParseCpuMillis("spec.cpu", spec.cpu()); cpu.ok()) {
    limits.set_cpu_millis(*cpu);
  }
  if (absl::StatusOr<int64_t> memory = ParseBytes("spec.memory", spec.memory()); memory.ok()) {
    limits.set_memory_bytes(*memory);
  }
  if (absl::StatusOr<int64_t> disk = ParseBytes("spec.disk", spec.disk()); disk.ok()) {
    limits.set_ephemeral_disk_bytes(*disk);
  }
  return limits;
}

}  // namespace

// A create's lookups: each answered from the cache or a call in flight. Dropping it cancels
// the calls not waited for.
struct Instances::CreateLookups {
  std::optional<stock::v1::Spec> cached_spec;
  std::optional<client::PendingCall<stock::v1::Spec>> spec_call;
  std::optional<client::PendingCall<storage::v1::Storage>> storage_call;
  std::optional<auth::v1::Quota> cached_quota;
  std::optional<client::PendingCall<auth::v1::Tenant>> tenant_call;
};

Instances::Instances(db::Pool& pool, Peers peers, Images& images, std::function<void()> on_work,
                     InstancesOptions options)
    : pool_(pool),
      peers_(peers),
      images_(images),
      on_work_(std::move(on_work)),
      specs_(options.clock != nullptr ? *options.clock : DefaultClock(), options.lookup_cache_ttl,
             options.lookup_cache_capacity),
      quotas_(options.clock != nullptr ? *options.clock : DefaultClock(), options.lookup_cache_ttl,
              options.lookup_cache_capacity) {}

absl::StatusOr<auth::v1::Quota> Instances::ReadQuota(const std::string& tenant,
                                                     const client::CallerCredentials& caller) {
  auth::v1::GetTenantRequest req;
  req.set_tenant_id(tenant);
  return KeepQuota(peers_.auth.GetTenant(req, client::CallContext::OnBehalf(caller)), tenant);
}

absl::StatusOr<auth::v1::Quota> Instances::KeepQuota(const absl::StatusOr<auth::v1::Tenant>& t,
                                                     const std::string& tenant) {
  if (!t.ok()) {
    return absl::Status(t.status().code(), absl::StrCat("reading tenant ", tenant,
                                                        "'s quota: ", t.status().message()));
  }
  quotas_.Insert(tenant, t->quota());
  return t->quota();
}

absl::Status Instances::CheckQuota(db::Tx& tx, const std::string& tenant,
                                   const auth::v1::Quota& quota, const std::string& instance_id,
                                   int gpus, bool new_instance) {
  repo::LockTenant(tx, tenant);
  return QuotaAllows(tenant, quota, repo::ReadTenantUsage(tx, tenant, instance_id), gpus,
                     new_instance);
}

Instances::CreateLookups Instances::StartCreateLookups(const authz::Principal& p,
                                                       const client::CallerCredentials& caller,
                                                       const std::string& tenant,
                                                       const pb::CreateInstanceRequest& req) {
  const client::CallContext call = client::CallContext::OnBehalf(caller);
  CreateLookups lookups;
  if (MayReadSpecs(p)) lookups.cached_spec = specs_.Find(req.spec_name());
  if (!lookups.cached_spec) {
    stock::v1::GetSpecRequest spec_req;
    spec_req.set_spec_name(req.spec_name());
    lookups.spec_call.emplace(peers_.stock.StartGetSpec(spec_req, call));
  }
  if (!req.storage_id().empty()) {
    storage::v1::GetStorageRequest storage_req;
    storage_req.set_storage_id(req.storage_id());
    lookups.storage_call.emplace(peers_.storage.StartGetStorage(storage_req, call));
  }
  if (MayReadTenant(p, tenant)) lookups.cached_quota = quotas_.Find(tenant);
  if (!lookups.cached_quota) {
    auth::v1::GetTenantRequest tenant_req;
    tenant_req.set_tenant_id(tenant);
    lookups.tenant_call.emplace(peers_.auth.StartGetTenant(tenant_req, call));
  }
  return lookups;
}

absl::StatusOr<stock::v1::Spec> Instances::AwaitSpec(CreateLookups& lookups,
                                                     const std::string& spec_name) {
  if (lookups.cached_spec) return *lookups.cached_spec;
  absl::StatusOr<stock::v1::Spec> spec = lookups.spec_call->Wait();
  if (!spec.ok()) return Named(spec.status(), "spec_name", spec_name);
  // Not a deprecated one: that refusal is made on a fresh answer every time.
  if (!spec->deprecated()) specs_.Insert(spec_name, *spec);
  return spec;
}

absl::StatusOr<auth::v1::Quota> Instances::AwaitQuota(CreateLookups& lookups,
                                                      const std::string& tenant) {
  if (lookups.cached_quota) return *lookups.cached_quota;
  return KeepQuota(lookups.tenant_call->Wait(), tenant);
}

absl::Status Instances::InsertNew(const pb::Instance& instance,
                                  const repo::InstanceRunSettings& run,
                                  const std::string& fingerprint, const auth::v1::Quota& quota,
                                  pb::Instance& out, bool& created) {
  const std::string& id = instance.instance_id();
  const std::string& tenant = instance.tenant_id();
  return pool_.RunInTransaction("instance.create", [&](db::Tx& tx) -> absl::Status {
    created = false;
    // The lock first: the retry check and the counts then see every create of the tenant that
    // committed before (a concurrent retry of this very request included).
    repo::LockTenant(tx, tenant);
    const repo::TenantUsage usage = repo::ReadTenantUsage(tx, tenant, id);
    if (usage.taken_by) {
      if (*usage.taken_by != fingerprint) {
        return absl::AlreadyExistsError(
            absl::StrCat("instance_id: ", id, " is taken; choose another"));
      }
      // A retry: the first answer's instance as it is now.
      std::optional<InstanceRow> taken = repo::GetInstance(tx, id);
      if (!taken) {  // a tombstone purged since the statement above
        return absl::AbortedError(absl::StrCat("instance_id: ", id, " was purged; retry"));
      }
      out = taken->instance;
      return absl::OkStatus();
    }
    GPUAAS_RETURN_IF_ERROR(QuotaAllows(tenant, quota, usage, instance.gpu_num(), true));
    out = repo::InsertInstance(tx, instance, run, fingerprint).instance;
    created = true;
    return absl::OkStatus();
  });
}

absl::Status Instances::ApplyRequestedImage(const pb::CreateInstanceRequest& req,
                                            const std::string& tenant, pb::Template& effective,
                                            ResolvedImage& image) {
  if (req.image().empty()) return absl::OkStatus();
  GPUAAS_ASSIGN_OR_RETURN(image, images_.Resolve(tenant, req.image()));
  effective = ApplyImage(image.image, req.template_());
  return absl::OkStatus();
}

absl::Status Instances::CreateInstance(const authz::Principal& p,
                                       const client::CallerCredentials& caller,
                                       const pb::CreateInstanceRequest& req, pb::Instance& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateTemplate("template", req.template_(), false));
  if (!req.tenant_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  }
  // The power first: a caller that may create nothing (a viewer, a machine's key) hears so,
  // whichever tenant it names.
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "creating an instance"));
  GPUAAS_ASSIGN_OR_RETURN(const std::string tenant, authz::TargetTenant(p, req.tenant_id()));
  // The lookups (with the caller's token, outside the transaction) run while the image is read
  // and the request checked; their errors are reported after those, spec, storage, quota.
  CreateLookups lookups = StartCreateLookups(p, caller, tenant, req);
  pb::Template effective = req.template_();
  ResolvedImage image;
  GPUAAS_RETURN_IF_ERROR(ApplyRequestedImage(req, tenant, effective, image));
  GPUAAS_RETURN_IF_ERROR(
      ValidateCreate(req, effective, !image.image.oci_digest_reference().empty()));

  GPUAAS_ASSIGN_OR_RETURN(const stock::v1::Spec spec, AwaitSpec(lookups, req.spec_name()));
  if (spec.deprecated()) {
    return absl::FailedPreconditionError(
        absl::StrCat("spec_name: ", req.spec_name(), " is deprecated; pick another spec"));
  }
  repo::InstanceRunSettings run{
      .registry_secret = "", .limits = SpecLimits(spec), .deny_egress = image.image.deny_egress()};
  std::string storage_uid;
  if (lookups.storage_call) {
    GPUAAS_ASSIGN_OR_RETURN(storage_uid,
                            CheckStorage(lookups.storage_call->Wait(), tenant, req.storage_id()));
  }
  const bool quota_cached = lookups.cached_quota.has_value();
  GPUAAS_ASSIGN_OR_RETURN(const auth::v1::Quota quota, AwaitQuota(lookups, tenant));

  const pb::Instance instance = NewInstance(req, tenant, spec, effective, image.image, storage_uid);
  GPUAAS_ASSIGN_OR_RETURN(run.registry_secret,
                          images_.SealForInstance(image.credentials, instance.instance_id()));
  const std::string fingerprint = absl::StrCat(tenant, "/", service::Fingerprint(req));
  bool created = false;
  absl::Status inserted = InsertNew(instance, run, fingerprint, quota, out, created);
  if (absl::IsResourceExhausted(inserted) && quota_cached) {
    // A refusal stands on a fresh quota only: one raised a moment ago lets the create through.
    GPUAAS_ASSIGN_OR_RETURN(const auth::v1::Quota fresh, ReadQuota(tenant, caller));
    if (!google::protobuf::util::MessageDifferencer::Equals(fresh, quota)) {
      inserted = InsertNew(instance, run, fingerprint, fresh, out, created);
    }
  }
  GPUAAS_RETURN_IF_ERROR(inserted);
  if (created && on_work_) on_work_();
  return absl::OkStatus();
}

absl::Status Instances::GetInstance(const authz::Principal& p, const pb::GetInstanceRequest& req,
                                    pb::Instance& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("instance_id", req.instance_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "reading instances"));
  return pool_.RunInTransaction("instance.get", [&](db::Tx& tx) -> absl::Status {
    std::optional<InstanceRow> row = repo::GetInstance(tx, req.instance_id());
    if (!row || !Visible(p, *row)) return InstanceNotFound();
    out = row->instance;
    for (pb::Event& e : repo::Events(tx, req.instance_id(), kEventsShown)) {
      *out.add_events() = std::move(e);
    }
    return absl::OkStatus();
  });
}

absl::Status Instances::ListInstances(const authz::Principal& p,
                                      const pb::ListInstancesRequest& req,
                                      pb::ListInstancesResponse& out) {
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  GPUAAS_ASSIGN_OR_RETURN(std::string scope, authz::InstanceListScope(p, "listing instances"));
  if (!req.tenant_id().empty()) {
    if (!scope.empty() && scope != req.tenant_id()) return absl::NotFoundError("tenant not found");
    scope = req.tenant_id();
  }
  if (!pb::State_IsValid(req.state())) return service::InvalidField("state", "unknown state");
  return pool_.RunInTransaction("instance.list", [&](db::Tx& tx) -> absl::Status {
    out.set_revision(repo::RevisionHorizon(tx));
    std::vector<pb::Instance> rows =
        repo::ListInstances(tx, scope, req.state(), req.spec_name(), page.after, page.limit);
    const std::string last = rows.empty() ? "" : rows.back().instance_id();
    out.set_next_page_token(service::NextPageToken(page, rows.size(), last));
    for (pb::Instance& i : rows) *out.add_instances() = std::move(i);
    return absl::OkStatus();
  });
}

absl::Status Instances::SetDesired(
    const authz::Principal& p, const std::string& instance_id,
    const std::function<absl::Status(db::Tx&, const pb::Instance&)>& change, pb::Instance& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("instance_id", instance_id));
  bool changed = false;
  GPUAAS_RETURN_IF_ERROR(
      pool_.RunInTransaction("instance.set_desired", [&](db::Tx& tx) -> absl::Status {
        std::optional<InstanceRow> row = repo::LockInstance(tx, instance_id);
        if (!row || !Visible(p, *row)) return InstanceNotFound();
        // Reading is enough to learn it exists; changing it needs more.
        GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "driving instances"));
        const int64_t before = row->instance.revision();
        GPUAAS_RETURN_IF_ERROR(change(tx, row->instance));
        out = repo::GetInstance(tx, instance_id)->instance;
        changed = out.revision() != before;
        return absl::OkStatus();
      }));
  if (changed && on_work_) on_work_();
  return absl::OkStatus();
}

absl::Status Instances::StartInstance(const authz::Principal& p,
                                      const client::CallerCredentials& caller,
                                      const pb::StartInstanceRequest& req, pb::Instance& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("instance_id", req.instance_id()));
  // The quota is read up front (a network call), then checked under the tenant's lock.
  std::optional<auth::v1::Quota> quota;
  return SetDesired(
      p, req.instance_id(),
      [&](db::Tx& tx, const pb::Instance& i) -> absl::Status {
        if (i.desired_state() == pb::DESIRED_STATE_DELETED) {
          return absl::FailedPreconditionError("instance is being deleted");
        }
        if (i.state() != pb::STATE_STOPPED && i.state() != pb::STATE_FAILED) {
          if (i.desired_state() == pb::DESIRED_STATE_RUNNING) return absl::OkStatus();
          if (i.state() == pb::STATE_STOPPING) {
            return absl::FailedPreconditionError("instance is stopping; start it once STOPPED");
          }
        }
        if (!quota) {
          absl::StatusOr<auth::v1::Quota> read = ReadQuota(i.tenant_id(), caller);
          if (!read.ok()) return read.status();
          quota = *read;
        }
        GPUAAS_RETURN_IF_ERROR(
            CheckQuota(tx, i.tenant_id(), *quota, i.instance_id(), i.gpu_num(), false));
        if (i.state() == pb::STATE_STOPPED || i.state() == pb::STATE_FAILED) {
          repo::MarkStart(tx, i.instance_id());
        } else {
          repo::SetDesired(tx, i.instance_id(), pb::DESIRED_STATE_RUNNING);
        }
        return absl::OkStatus();
      },
      out);
}

absl::Status Instances::StopInstance(const authz::Principal& p, const pb::StopInstanceRequest& req,
                                     pb::Instance& out) {
  return SetDesired(
      p, req.instance_id(),
      [&](db::Tx& tx, const pb::Instance& i) -> absl::Status {
        if (i.desired_state() == pb::DESIRED_STATE_DELETED) {
          return absl::FailedPreconditionError("instance is being deleted");
        }
        if (i.desired_state() != pb::DESIRED_STATE_STOPPED) {
          repo::SetDesired(tx, i.instance_id(), pb::DESIRED_STATE_STOPPED);
        }
        return absl::OkStatus();
      },
      out);
}

absl::Status Instances::DeleteInstance(const authz::Principal& p,
                                       const pb::DeleteInstanceRequest& req, pb::Instance& out) {
  return SetDesired(
      p, req.instance_id(),
      [&](db::Tx& tx, const pb::Instance& i) -> absl::Status {
        if (i.desired_state() != pb::DESIRED_STATE_DELETED) {
          repo::SetDesired(tx, i.instance_id(), pb::DESIRED_STATE_DELETED);
        }
        return absl::OkStatus();
      },
      out);
}

absl::Status Instances::ListUsage(const authz::Principal& p, const pb::ListUsageRequest& req,
                                  pb::ListUsageResponse& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "reading usage"));
  GPUAAS_ASSIGN_OR_RETURN(std::string scope, authz::TenantScope(p));
  if (!req.tenant_id().empty()) {
    if (!scope.empty() && scope != req.tenant_id()) return absl::NotFoundError("tenant not found");
    scope = req.tenant_id();
  }
  const int limit = req.page_size() <= 0 ? 100 : std::min(req.page_size(), 1000);
  int64_t after = 0;
  if (!req.page_token().empty() && !absl::SimpleAtoi(req.page_token(), &after)) {
    return service::InvalidField("page_token", "invalid");
  }
  const absl::Time start =
      req.has_start_time() ? FromProtoTime(req.start_time()) : absl::UnixEpoch();
  const absl::Time end = req.has_end_time() ? FromProtoTime(req.end_time()) : absl::Now();
  if (end < start) return service::InvalidField("end_time", "before start_time");
  return pool_.RunInTransaction("instance.list_usage", [&](db::Tx& tx) -> absl::Status {
    out.Clear();
    std::vector<pb::UsageRecord> records =
        repo::ListUsage(tx, scope, req.instance_id(), start, end, after, limit);
    if (static_cast<int>(records.size()) == limit) {
      out.set_next_page_token(records.back().usage_id());
    }
    for (pb::UsageRecord& r : records) *out.add_records() = std::move(r);
    for (pb::UsageTotal& t : repo::UsageTotals(tx, scope, req.instance_id(), start, end)) {
      *out.add_totals() = std::move(t);
    }
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::instance
