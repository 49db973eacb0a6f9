#include "services/instance/instance_watches.h"

#include <vector>

#include "absl/time/clock.h"
#include "libs/authz/roles.h"
#include "libs/authz/tenant_scope.h"
#include "libs/common/status_macros.h"
#include "services/instance/repository_instances.h"
#include "services/instance/secret_envs.h"

namespace gpuaas::instance {
namespace {

constexpr int kBatch = 500;
// A change drawn but not yet committed holds a watch back (repo::RevisionHorizon); commits
// notify, but an abort does not, so a held-back watch looks again this often, this many times.
constexpr absl::Duration kHeldBackRetry = absl::Milliseconds(10);
constexpr int kHeldBackTries = 100;

}  // namespace

struct InstanceWatches::Watch {
  std::string scope;  // tenant, or "" for every tenant
  std::shared_ptr<rpc::StreamWriter<pb::InstanceChange>> out;
  absl::Mutex mu;  // one catch-up at a time, in revision order
  int64_t sent ABSL_GUARDED_BY(mu) = 0;
};

class InstanceWatches::Session final : public rpc::PushSession {
 public:
  Session(InstanceWatches& owner, Watch* watch) : owner_(owner), watch_(watch) {}
  void OnEnd(const absl::Status&) override { owner_.Forget(watch_); }

 private:
  InstanceWatches& owner_;
  Watch* watch_;
};

InstanceWatches::InstanceWatches(db::Pool& pool, std::string listen_dsn)
    : pool_(pool),
      listener_(std::move(listen_dsn), {"instance_changes"},
                {.on_notify = [this](std::string_view, std::string_view) { WakeAll(); },
                 .on_connect = [this] { WakeAll(); }}) {}

InstanceWatches::~InstanceWatches() { Stop(); }

void InstanceWatches::Start() { listener_.Start(); }
void InstanceWatches::Stop() { listener_.Stop(); }

bool InstanceWatches::CatchUp(Watch& w) {
  absl::MutexLock lock(&w.mu);
  for (int held_back = 0;;) {
    bool behind = false;
    absl::StatusOr<std::vector<InstanceRow>> rows = pool_.Read<std::vector<InstanceRow>>(
        "instance.watch", [&](db::Tx& tx) -> absl::StatusOr<std::vector<InstanceRow>> {
          int64_t drawn = 0;
          const int64_t horizon = repo::RevisionHorizon(tx, &drawn);
          behind = horizon < drawn;
          return repo::Changes(tx, w.scope, w.sent, horizon, kBatch);
        });
    if (!rows.ok()) return true;  // the next notification (or reconnect) tries again
    for (InstanceRow& row : *rows) {
      pb::InstanceChange change;
      change.set_type(row.deleted ? pb::InstanceChange::TYPE_DELETED
                                  : pb::InstanceChange::TYPE_UPSERTED);
      change.set_revision(row.instance.revision());
      w.sent = row.instance.revision();
      *change.mutable_instance() = std::move(row.instance);
      HideSecretEnvs(change);
      if (!w.out->Send(std::move(change))) return false;
    }
    if (rows->size() == kBatch) continue;
    if (!behind || ++held_back > kHeldBackTries) return true;
    absl::SleepFor(kHeldBackRetry);
  }
}

void InstanceWatches::WakeAll() {
  std::vector<std::shared_ptr<Watch>> all;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, w] : watches_) all.push_back(w);
  }
  for (const std::shared_ptr<Watch>& w : all) CatchUp(*w);
}

void InstanceWatches::Forget(Watch* w) {
  absl::MutexLock lock(&mu_);
  watches_.erase(w);
}

absl::StatusOr<std::unique_ptr<rpc::PushSession>> InstanceWatches::Open(
    const authz::Principal& p, const pb::WatchInstancesRequest& req,
    std::shared_ptr<rpc::StreamWriter<pb::InstanceChange>> out) {
  GPUAAS_ASSIGN_OR_RETURN(std::string scope, authz::InstanceListScope(p, "watching instances"));
  if (!req.tenant_id().empty()) {
    if (!scope.empty() && scope != req.tenant_id()) return absl::NotFoundError("tenant not found");
    scope = req.tenant_id();
  }
  if (req.since_revision() < 0) {
    return absl::InvalidArgumentError("since_revision: must be >= 0");
  }
  GPUAAS_ASSIGN_OR_RETURN(
      const int64_t purged,
      pool_.Read<int64_t>("instance.watch_horizon", [](db::Tx& tx) -> absl::StatusOr<int64_t> {
        return repo::PurgedRevision(tx);
      }));
  if (req.since_revision() > 0 && req.since_revision() < purged) {
    return absl::OutOfRangeError(
        "since_revision: older than the deletions still remembered; list again and watch from "
        "the list's revision");
  }
  auto watch = std::make_shared<Watch>();
  watch->scope = scope;
  watch->out = out;
  {
    absl::MutexLock lock(&watch->mu);
    watch->sent = req.since_revision();
  }
  // Registered first, so a change committed during the initial read wakes it afterwards.
  {
    absl::MutexLock lock(&mu_);
    watches_[watch.get()] = watch;
  }
  CatchUp(*watch);
  pb::InstanceChange synced;
  synced.set_type(pb::InstanceChange::TYPE_SYNCED);
  {
    absl::MutexLock lock(&watch->mu);
    synced.set_revision(watch->sent);
  }
  out->Send(std::move(synced));
  return std::make_unique<Session>(*this, watch.get());
}

}  // namespace gpuaas::instance
