// The instance reconciler: drives every instance from its row towards its desired state, one
// step per transaction (reconciler_plan.h says which), on N worker threads.
//
// A worker takes a row due for work (`needs_work AND next_attempt_time <= now()`) with
// FOR UPDATE SKIP LOCKED, runs its next step (calls to the stock and storage services happen
// while the row is locked, with deadlines), records the outcome and commits. So several
// replicas never work one instance at once, and a replica that dies hands its rows over the
// moment its connections drop. A failed call backs off (next_attempt_time, attempts); every step
// is idempotent, so a crash anywhere resumes at the same step.
//
// Workers wake on NOTIFY instance_work (any replica's or the API's commits), on Kick(), and
// every poll_interval for retries. A sweeper thread, every poll_interval, starts the runs a lost
// node had started again elsewhere (PENDING NODE_LOST; one it never started fails), and
// auto-stops runs past max_run_time or idle_timeout.
//
// Database connections: one per worker while it works, one for the sweeper, plus the
// listener's own (outside the pool).
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libs/client/access_tokens.h"
#include "libs/client/auth_client.h"
#include "libs/client/stock_client.h"
#include "libs/client/storage_client.h"
#include "libs/common/periodic_task.h"
#include "libs/common/stop_signal.h"
#include "libs/db/db.h"
#include "libs/db/notify_listener.h"
#include "services/instance/reconciler_plan.h"
#include "services/instance/repository_reconcile.h"
#include "services/instance/step_hook.h"

namespace gpuaas::instance {

struct ReconcilerOptions {
  // Worker threads.
  int workers = 4;
  // How often idle workers look for retries that came due, and the sweeper runs.
  absl::Duration poll_interval = absl::Seconds(1);
  // The deadline of each call to the stock and storage services.
  absl::Duration call_timeout = absl::Seconds(5);
  // A failed step retries after initial_backoff, doubling per attempt up to max_backoff.
  absl::Duration initial_backoff = absl::Milliseconds(500);
  absl::Duration max_backoff = absl::Seconds(30);
  // A claim answered NO_CAPACITY is tried this many more times (with the backoff above) before
  // the instance fails NO_CAPACITY: a stock released a moment later, or a stock service
  // replica that has just started and not yet heard from every node, fails no instance.
  int no_capacity_retries = 3;
  // A node unheard of for this long is lost.
  absl::Duration node_timeout = absl::Seconds(30);
  // Deleted instances stay as tombstones this long (watchers learn of the deletion), then
  // the sweeper purges them (repository_reconcile.h, PurgeTombstones).
  absl::Duration tombstone_retention = absl::Hours(24);
  // The DSN the listener connects to for NOTIFY instance_work; empty: no listener (Kick and
  // the poll only).
  std::string listen_dsn;
};

// The services the reconciler calls and its credential for them; not owned.
struct ReconcilerDeps {
  db::Pool& pool;
  client::StockClient& stock;
  client::StorageClient& storage;
  // The tenant's SSH keys for each run (ListAuthorizedKeys).
  client::AuthClient& auth;
  // A ROLE_SERVICE API key's tokens.
  client::AccessTokens& tokens;
  // Optional test hook (step_hook.h).
  StepHook* hook = nullptr;
};

class Reconciler final {
 public:
  Reconciler(ReconcilerDeps deps, ReconcilerOptions options);
  // Stop().
  ~Reconciler();
  Reconciler(const Reconciler&) = delete;
  Reconciler& operator=(const Reconciler&) = delete;

  // Starts the workers, the sweeper and the listener. Never blocks. Call once.
  void Start();
  // Stops every thread: a step in flight finishes (or its hook returns) first. Idempotent.
  void Stop();
  // Wakes the workers now (the API calls it after a write, for the latency of a NOTIFY).
  // Thread-safe, never blocks.
  void Kick();

  // One step of one row due for work, on the calling thread: true when a row was worked
  // (whatever the step's outcome), false when none was due. Errors: the database's, or a
  // hook's. For tests and tools; Start() runs this in a loop.
  absl::StatusOr<bool> RunOnce();
  // One pass of the sweeper (node loss, auto-stop) on the calling thread. Blocks on the
  // database. Returns how many rows it changed.
  absl::StatusOr<int> SweepOnce();

 private:
  enum class Outcome { kDone, kRetry };

  void WorkLoop();
  // Waits until Kick() after `seen`, the poll interval, or Stop(); returns the kick count.
  int64_t WaitForWork(int64_t seen);

  // Runs `step` on `row` inside `tx`: kDone after its effect is written (a failure the
  // instance must show is written as FAILED), kRetry when a call failed and should be tried
  // again later (`why` says why).
  Outcome RunStep(db::Tx& tx, const WorkRow& row, Step step, absl::Status& why);
  Outcome Claim(db::Tx& tx, const WorkRow& row, absl::Status& why);
  Outcome Attach(db::Tx& tx, const WorkRow& row, absl::Status& why);
  Outcome Publish(db::Tx& tx, const WorkRow& row, absl::Status& why);
  Outcome Meter(db::Tx& tx, const WorkRow& row, absl::Status& why);
  Outcome Unpublish(db::Tx& tx, const WorkRow& row);
  Outcome Detach(db::Tx& tx, const WorkRow& row, absl::Status& why);
  Outcome Release(db::Tx& tx, const WorkRow& row, absl::Status& why);

  // A context for one call to another service: the service token and call_timeout.
  absl::StatusOr<client::CallContext> Call();
  // Bookkeeping for a failed call: a refused token is dropped so the next call exchanges anew.
  void NoteCallError(const absl::Status& status);
  absl::Duration BackoffFor(int32_t attempts) const;

  ReconcilerDeps deps_;
  const ReconcilerOptions options_;
  ReconcileRepository repo_;
  std::unique_ptr<db::NotifyListener> listener_;

  StopSignal stopping_;
  std::unique_ptr<PeriodicTask> sweeper_;
  absl::Mutex mu_;
  int64_t kicks_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
  // When Start() ran. Node loss is judged only node_timeout after it: while no replica ran,
  // no agent could report, and silence it could not break is no sign of a lost node.
  absl::Time started_ = absl::InfinitePast();
  // The sweeper's last purge of tombstones (a scan of the table: once a minute at most).
  absl::Time last_purge_ = absl::InfinitePast();
};

}  // namespace gpuaas::instance
