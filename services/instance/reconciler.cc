// The reconciler's threads: workers, sweeper, listener. The steps are in reconciler_steps.cc.
#include "services/instance/reconciler.h"

#include <algorithm>

#include "libs/common/backoff.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"

namespace gpuaas::instance {

Reconciler::Reconciler(ReconcilerDeps deps, ReconcilerOptions options)
    : deps_(deps), options_(std::move(options)) {}

Reconciler::~Reconciler() { Stop(); }

void Reconciler::Start() {
  started_ = absl::Now();
  if (!options_.listen_dsn.empty()) {
    listener_ = std::make_unique<db::NotifyListener>(
        options_.listen_dsn, std::vector<std::string>{"instance_work"},
        db::NotifyCallbacks{.on_notify = [this](std::string_view, std::string_view) { Kick(); },
                            // Whatever was notified while the connection was down is due now.
                            .on_connect = [this] { Kick(); }});
    listener_->Start();
  }
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    threads_.emplace_back([this] { WorkLoop(); });
  }
  sweeper_ = std::make_unique<PeriodicTask>(
      PeriodicTask::Options{.interval = options_.poll_interval, .run_immediately = true}, [this] {
        absl::StatusOr<int> changed = SweepOnce();
        if (!changed.ok())
          Logger("instance")->warn("reconciler sweep: {}", changed.status().ToString());
      });
}

void Reconciler::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  stopping_.Stop();
  if (listener_) listener_->Stop();
  sweeper_.reset();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void Reconciler::Kick() {
  absl::MutexLock lock(&mu_);
  ++kicks_;
}

int64_t Reconciler::WaitForWork(int64_t seen) {
  absl::MutexLock lock(&mu_);
  const auto woken = [&]()
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return kicks_ != seen || stopped_; };
  mu_.AwaitWithTimeout(absl::Condition(&woken), options_.poll_interval);
  return kicks_;
}

void Reconciler::WorkLoop() {
  auto log = Logger("instance");
  while (!stopping_.stopped()) {
    int64_t seen;
    {
      // Read before looking, so that a kick while we look is not lost.
      absl::MutexLock lock(&mu_);
      seen = kicks_;
    }
    absl::StatusOr<bool> worked = RunOnce();
    if (worked.ok() && *worked) continue;
    if (!worked.ok() && !stopping_.stopped()) {
      log->warn("reconciler: {}", worked.status().ToString());
    }
    WaitForWork(seen);
  }
}

absl::StatusOr<bool> Reconciler::RunOnce() {
  bool worked = false;
  std::string instance_id;
  Step step = Step::kWait;
  Outcome outcome = Outcome::kDone;
  absl::Status why;
  // One attempt: a step's calls to other services must not repeat inside one transaction; a
  // conflict leaves the row for the next look.
  absl::Status s = deps_.pool.RunInTransaction(
      "instance.reconcile",
      [&](db::Tx& tx) -> absl::Status {
        worked = false;
        // A step waits on one call at a time, each bounded by call_timeout; a hook (tests,
        // crash drills) may pause longer, and then the row is handed over as after a crash.
        repo_.LimitIdleInTransaction(tx, options_.call_timeout + absl::Seconds(5));
        std::optional<WorkRow> row = repo_.LockNextWork(tx);
        if (!row) return absl::OkStatus();
        worked = true;
        instance_id = row->instance_id;
        step = NextStep(*row);
        const bool hooked = deps_.hook != nullptr && step != Step::kWait;
        if (hooked) GPUAAS_RETURN_IF_ERROR(deps_.hook->BeforeStep(instance_id, step, stopping_));
        outcome = RunStep(tx, *row, step, why);
        if (outcome == Outcome::kRetry) {
          repo_.Backoff(tx, instance_id, BackoffFor(row->attempts));
        } else {
          std::optional<WorkRow> after = repo_.ReadRow(tx, instance_id);
          repo_.Settle(tx, instance_id, after && NextStep(*after) != Step::kWait);
        }
        if (hooked) GPUAAS_RETURN_IF_ERROR(deps_.hook->BeforeCommit(instance_id, step, stopping_));
        return absl::OkStatus();
      },
      /*serializable=*/false, db::RetryOptions{.max_attempts = 1});
  if (!s.ok()) return s;
  if (worked && step != Step::kWait) {
    auto log = Logger("instance");
    if (outcome == Outcome::kRetry) {
      log->warn("instance {}: step {} failed, will retry: {}", instance_id, StepName(step),
                why.ToString());
    } else {
      log->debug("instance {}: step {} done", instance_id, StepName(step));
    }
  }
  return worked;
}

absl::StatusOr<int> Reconciler::SweepOnce() {
  std::vector<std::string> lost;
  std::vector<std::string> stopped;
  if (absl::Now() - started_ >= options_.node_timeout) {
    GPUAAS_RETURN_IF_ERROR(deps_.pool.RunInTransaction("instance.node_loss", [&](db::Tx& tx) {
      lost = repo_.MarkNodesLost(tx, options_.node_timeout);
      return absl::OkStatus();
    }));
  }
  GPUAAS_RETURN_IF_ERROR(deps_.pool.RunInTransaction("instance.auto_stop", [&](db::Tx& tx) {
    stopped = repo_.AutoStop(tx);
    return absl::OkStatus();
  }));
  int purged = 0;
  if (absl::Now() - last_purge_ >= std::min(absl::Minutes(1), options_.tombstone_retention)) {
    GPUAAS_RETURN_IF_ERROR(deps_.pool.RunInTransaction("instance.purge", [&](db::Tx& tx) {
      purged = repo_.PurgeTombstones(tx, options_.tombstone_retention);
      return absl::OkStatus();
    }));
    last_purge_ = absl::Now();
  }
  auto log = Logger("instance");
  if (purged > 0) log->info("purged {} tombstones of deleted instances", purged);
  for (const std::string& id : lost) log->warn("instance {}: its node was lost", id);
  for (const std::string& id : stopped) log->info("instance {}: auto-stopped", id);
  const int changed = static_cast<int>(lost.size() + stopped.size());
  if (changed > 0) Kick();
  return changed;
}

absl::Duration Reconciler::BackoffFor(int32_t attempts) const {
  return Backoff::Ceiling({.initial = options_.initial_backoff, .max = options_.max_backoff},
                          attempts);
}

}  // namespace gpuaas::instance
