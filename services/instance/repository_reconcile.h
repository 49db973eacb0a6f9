// The SQL of the instance service's back half: the reconciler's steps and sweeps over
// instance.instances and instance.usage (repository_reconcile.cc), and the agents' side,
// instance.nodes and the node sets and reports (repository_nodes.cc). Methods run inside the
// caller's transaction (db::Tx); errors are libs/db exceptions that db::Pool::RunInTransaction
// turns into a Status. Times that must never run ahead of the database's clock are taken in SQL
// (clock_timestamp(), not the transaction's start).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "libs/db/db.h"
#include "services/instance/reconciler_plan.h"

namespace gpuaas::instance {

class ReconcileRepository final {
 public:
  // The database's clock now (clock_timestamp()).
  absl::Time Now(db::Tx& tx);

  // --- The reconciler (repository_reconcile.cc).

  // A session idle inside this transaction for longer than `limit` (its process hung in a
  // call, or lost its network) is ended by the server, which releases the row for another
  // replica; a process that dies drops its connection and releases it at once.
  void LimitIdleInTransaction(db::Tx& tx, absl::Duration limit);

  // The row due for work that no other transaction holds (FOR UPDATE SKIP LOCKED), locked
  // until the transaction ends; the one waiting longest first.
  std::optional<WorkRow> LockNextWork(db::Tx& tx);
  // The row as it is now (inside a transaction that holds its lock).
  std::optional<WorkRow> ReadRow(db::Tx& tx, const std::string& instance_id);

  // kBegin: held_run := run and a clean slate for the run's bookkeeping; a PENDING row
  // forgets the last run's reason, message and exit code.
  void BeginRun(db::Tx& tx, const WorkRow& row);
  // kClaim.
  void SetClaimed(db::Tx& tx, const std::string& instance_id, const std::string& stock_id,
                  const std::string& node_id, const std::vector<std::string>& gpu_uuids,
                  const std::string& mig_partition);
  // kAttach. An instance created before storages had identities is bound to `storage_uid`
  // (the attached storage's) from its first attach on. `ceph` (nullptr for a local storage) is
  // the subvolume the agent mounts instead of host_path; it names no secret.
  void SetAttached(db::Tx& tx, const std::string& instance_id, const std::string& host_path,
                   const std::string& storage_uid, const pb::CephVolume* ceph = nullptr);
  // kPublish: the workload joins its node's set with the SSH keys its run trusts; the node gets
  // a row so that a node which never shows up is lost like one that went away.
  void Publish(db::Tx& tx, const std::string& instance_id, const std::string& node_id,
               const std::string& authorized_keys);
  // FAILED with `reason` and `message`, out of its node's set.
  void Fail(db::Tx& tx, const std::string& instance_id, pb::Reason reason,
            const std::string& message);
  // kUnpublish: out of its node's set (unpublish_time when it was in it), in `state` with
  // `reason` and `message`.
  void Unpublish(db::Tx& tx, const std::string& instance_id, pb::State state, pb::Reason reason,
                 const std::string& message);
  // kMeter: the run's usage interval, from the workload's start (never before the instance's
  // last interval ended, never after now) priced at `micros_per_hour` `currency`; closed at
  // once (at the workload's stop, never after now) when `close`.
  void OpenUsage(db::Tx& tx, const std::string& instance_id, int64_t micros_per_hour,
                 const std::string& currency, bool close);
  // kMeterClose: the open interval ends at the workload's stop, never after now.
  void CloseUsage(db::Tx& tx, const std::string& instance_id);
  // kDetach.
  void SetDetached(db::Tx& tx, const std::string& instance_id);
  // kRelease: the node fields, ports and held_run cleared; stop_time set for a run that
  // started.
  void SetReleased(db::Tx& tx, const std::string& instance_id);
  // kFinish: STOPPING → STOPPED.
  void SetStopped(db::Tx& tx, const std::string& instance_id);
  // kFinish of a deleted instance: the tombstone (state DELETING, delete_time).
  void Tombstone(db::Tx& tx, const std::string& instance_id);

  // After a step: needs_work as the next step says, attempts reset.
  void Settle(db::Tx& tx, const std::string& instance_id, bool needs_work);
  // After a failed call: retry after `delay`.
  void Backoff(db::Tx& tx, const std::string& instance_id, absl::Duration delay);

  // Node loss: every row holding something on a node unseen for `timeout`: a live run whose
  // workload had started there starts again as a new run (PENDING NODE_LOST, on another node),
  // one that never started there FAILED NODE_LOST; its workload counted stopped at the node's
  // last_seen. Returns the rows changed.
  std::vector<std::string> MarkNodesLost(db::Tx& tx, absl::Duration timeout);
  // Auto-stop: READY/RUNNING runs past max_run_time, or idle for idle_timeout, get desired
  // STOPPED and state STOPPING with MAX_RUN_TIME / IDLE_TIMEOUT. Returns the rows changed.
  std::vector<std::string> AutoStop(db::Tx& tx);
  // Tombstones deleted more than `retention` ago go, with their events (usage records stay:
  // they are the bill), and watch_horizon moves past their revisions, so a watch resuming from
  // before them is told to list again instead of missing a deletion. Their ids become free.
  // Returns how many went.
  int PurgeTombstones(db::Tx& tx, absl::Duration retention);

  // --- The agents' side (repository_nodes.cc).

  // The node was heard from now: its row upserted, its address kept unless `address` is
  // empty. Returns the node's address.
  std::string SeeNode(db::Tx& tx, const std::string& node_id, const std::string& address);
  // last_seen := now for every node of `node_ids` that has a row.
  void TouchNodes(db::Tx& tx, const std::vector<std::string>& node_ids);
  // The node's published rows, by instance_id.
  std::vector<WorkRow> PublishedOn(db::Tx& tx, const std::string& node_id);
  // The rows of `instance_ids` holding a run on the node, locked (in instance_id order, so two
  // reports never deadlock; waiting for a reconciler's step on them).
  std::vector<WorkRow> LockHeldOn(db::Tx& tx, const std::string& node_id,
                                  const std::vector<std::string>& instance_ids);
  // The node's other rows holding a run, locked, skipping those a reconciler works on now (a
  // complete report only looks for workloads gone, and such a row does not wait for that).
  std::vector<WorkRow> LockOthersHeldOn(db::Tx& tx, const std::string& node_id,
                                        const std::vector<std::string>& instance_ids);
  // Writes what a report changed: the visible state, reason, message, exit code, times and
  // ports, published, the workload's bookkeeping and last_active_time; with `wake`,
  // needs_work and no wait.
  void WriteReported(db::Tx& tx, const WorkRow& row, bool wake);
  // An event of `row`'s instance in its current state with `message`, unless its latest event
  // says the same (an agent repeats its progress on every report).
  void AddEventUnlessLatest(db::Tx& tx, const WorkRow& row, const std::string& message);
};

}  // namespace gpuaas::instance
