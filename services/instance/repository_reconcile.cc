// The reconciler's statements. States, reasons and workload states are the proto enums'
// numbers: State 1 PENDING, 2 READY, 3 RUNNING, 4 STOPPING, 5 STOPPED, 6 FAILED, 7 DELETING;
// DesiredState 1 RUNNING, 2 STOPPED, 3 DELETED; WorkloadState 3 EXITED, 4 STOPPED, 5 FAILED.
#include "services/instance/repository_reconcile.h"

#include <string>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "services/instance/repository_reconcile_sql.h"

namespace gpuaas::instance {

WorkRow WorkRowFromRow(const db::Row& r) {
  WorkRow w;
  w.instance_id = r.Get<std::string>(0);
  w.tenant_id = r.Get<std::string>(1);
  w.spec_name = r.Get<std::string>(2);
  w.gpu_num = r.Get<int32_t>(3);
  w.storage_id = r.Get<std::string>(4);
  // A template the API wrote is always valid; an unparsable one runs as an empty workload
  // rather than stopping the reconciler.
  (void)w.tmpl.ParseFromString(r.GetBytes(5));
  w.desired = r.GetEnum<pb::DesiredState>(6);
  w.state = r.GetEnum<pb::State>(7);
  w.reason = r.GetEnum<pb::Reason>(8);
  w.run = r.Get<int32_t>(9);
  w.held_run = r.Get<int32_t>(10);
  w.stock_id = r.Get<std::string>(11);
  w.node_id = r.Get<std::string>(12);
  const std::string uuids = r.Get<std::string>(13);
  if (!uuids.empty()) w.gpu_uuids = absl::StrSplit(uuids, ',');
  w.mig_partition = r.Get<std::string>(14);
  w.attached = r.Get<bool>(15);
  w.host_path = r.Get<std::string>(16);
  w.published = r.Get<bool>(17);
  w.workload_state = r.GetEnum<pb::WorkloadState>(18);
  w.workload_start_time = r.GetOptionalTime(19);
  w.workload_stop_time = r.GetOptionalTime(20);
  w.unpublish_time = r.GetOptionalTime(21);
  w.metered = r.Get<int>(22);
  w.attempts = r.Get<int32_t>(23);
  w.delete_time = r.GetOptionalTime(24);
  w.message = r.Get<std::string>(25);
  w.exit_code = r.Get<int32_t>(26);
  w.start_time = r.GetOptionalTime(27);
  w.stop_time = r.GetOptionalTime(28);
  pb::Instance ports;
  if (ports.ParseFromString(r.GetBytes(29))) w.ports = ports.ports();
  w.last_active_time = r.GetOptionalTime(30);
  w.proxy_token = r.Get<std::string>(31);
  w.storage_uid = r.Get<std::string>(32);
  w.image_reference = r.Get<std::string>(33);
  w.registry_secret = r.GetBytes(34);
  (void)w.limits.ParseFromString(r.GetBytes(35));
  w.deny_egress = r.Get<bool>(36);
  (void)w.ceph_mount.ParseFromString(r.GetBytes(37));
  w.authorized_keys = r.Get<std::string>(38);
  return w;
}

absl::Time ReconcileRepository::Now(db::Tx& tx) {
  constexpr std::string_view kNow = "SELECT " GPUAAS_SQL_MICROS("clock_timestamp()");
  return tx.Exec(kNow).First()->GetTime(0);
}

void ReconcileRepository::LimitIdleInTransaction(db::Tx& tx, absl::Duration limit) {
  constexpr std::string_view kLimitIdle =
      "SELECT set_config('idle_in_transaction_session_timeout', $1, true)";
  tx.Exec(kLimitIdle, std::to_string(absl::ToInt64Milliseconds(limit)));
}

std::optional<WorkRow> ReconcileRepository::LockNextWork(db::Tx& tx) {
  constexpr std::string_view kLockNextWork = GPUAAS_WORK_FROM
      "WHERE needs_work AND next_attempt_time <= clock_timestamp() "
      "ORDER BY next_attempt_time LIMIT 1 FOR UPDATE SKIP LOCKED";
  std::optional<db::Row> row = tx.Exec(kLockNextWork).First();
  if (!row) return std::nullopt;
  return WorkRowFromRow(*row);
}

std::optional<WorkRow> ReconcileRepository::ReadRow(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kReadRow = GPUAAS_WORK_FROM "WHERE instance_id = $1";
  std::optional<db::Row> row = tx.Exec(kReadRow, instance_id).First();
  if (!row) return std::nullopt;
  return WorkRowFromRow(*row);
}

void ReconcileRepository::BeginRun(db::Tx& tx, const WorkRow& row) {
  constexpr std::string_view kBeginRun =
      "UPDATE instance.instances SET held_run = run, attached = (storage_id <> ''), "
      "host_path = '', ceph_mount = '', stock_id = '', node_id = '', gpu_uuids = '{}', "
      "mig_partition = '', "
      "published = false, workload_state = 0, workload_start_time = NULL, "
      "workload_stop_time = NULL, unpublish_time = NULL, metered = 0, "
      "reason = CASE WHEN state = 1 THEN 0 ELSE reason END, "
      "message = CASE WHEN state = 1 THEN '' ELSE message END, "
      "exit_code = CASE WHEN state = 1 THEN 0 ELSE exit_code END "
      "WHERE instance_id = $1";
  tx.Exec(kBeginRun, row.instance_id);
}

void ReconcileRepository::SetClaimed(db::Tx& tx, const std::string& instance_id,
                                     const std::string& stock_id, const std::string& node_id,
                                     const std::vector<std::string>& gpu_uuids,
                                     const std::string& mig_partition) {
  // GPU UUIDs never hold ','.
  constexpr std::string_view kSetClaimed =
      "UPDATE instance.instances SET stock_id = $2, node_id = $3, "
      "gpu_uuids = string_to_array($4, ','), mig_partition = $5 WHERE instance_id = $1";
  tx.Exec(kSetClaimed, instance_id, stock_id, node_id, absl::StrJoin(gpu_uuids, ","),
          mig_partition);
}

void ReconcileRepository::SetAttached(db::Tx& tx, const std::string& instance_id,
                                      const std::string& host_path, const std::string& storage_uid,
                                      const pb::CephVolume* ceph) {
  constexpr std::string_view kSetAttached =
      "UPDATE instance.instances SET attached = true, host_path = $2, "
      "storage_uid = CASE WHEN storage_uid = '' THEN $3 ELSE storage_uid END, "
      "ceph_mount = $4 WHERE instance_id = $1";
  tx.Exec(kSetAttached, instance_id, host_path, storage_uid,
          db::Bytes{ceph == nullptr ? std::string() : ceph->SerializeAsString()});
}

void ReconcileRepository::Publish(db::Tx& tx, const std::string& instance_id,
                                  const std::string& node_id, const std::string& authorized_keys) {
  constexpr std::string_view kEnsureNode =
      "INSERT INTO instance.nodes (node_id) VALUES ($1) ON CONFLICT (node_id) DO NOTHING";
  constexpr std::string_view kPublish =
      "UPDATE instance.instances SET published = true, authorized_keys = $2 "
      "WHERE instance_id = $1";
  tx.Exec(kEnsureNode, node_id);
  tx.Exec(kPublish, instance_id, authorized_keys);
}

void ReconcileRepository::Fail(db::Tx& tx, const std::string& instance_id, pb::Reason reason,
                               const std::string& message) {
  constexpr std::string_view kFail =
      "UPDATE instance.instances SET state = 6, reason = $2, message = $3, "
      "stop_time = clock_timestamp(), "
      "unpublish_time = CASE WHEN published THEN clock_timestamp() ELSE unpublish_time END, "
      "published = false WHERE instance_id = $1";
  tx.Exec(kFail, instance_id, reason, message);
}

void ReconcileRepository::Unpublish(db::Tx& tx, const std::string& instance_id, pb::State state,
                                    pb::Reason reason, const std::string& message) {
  constexpr std::string_view kUnpublish =
      "UPDATE instance.instances SET state = $2, reason = $3, message = $4, "
      "unpublish_time = CASE WHEN published THEN clock_timestamp() ELSE unpublish_time END, "
      "published = false WHERE instance_id = $1";
  tx.Exec(kUnpublish, instance_id, state, reason, message);
}

void ReconcileRepository::OpenUsage(db::Tx& tx, const std::string& instance_id,
                                    int64_t micros_per_hour, const std::string& currency,
                                    bool close) {
  // One instance's intervals never overlap: a run starts no earlier than the last one ended.
  constexpr std::string_view kOpenUsage =
      "INSERT INTO instance.usage (instance_id, tenant_id, spec_name, node_id, gpu_num, "
      "micros_per_hour, currency, start_time, end_time) "
      "SELECT i.instance_id, i.tenant_id, i.spec_name, i.node_id, i.gpu_num, $2, $3, s.t, "
      "CASE WHEN $4 THEN greatest(s.t, least(clock_timestamp(), "
      "coalesce(i.workload_stop_time, clock_timestamp()))) END "
      "FROM instance.instances i, LATERAL (SELECT least(clock_timestamp(), "
      "greatest(i.workload_start_time, coalesce((SELECT max(u.end_time) FROM instance.usage u "
      "WHERE u.instance_id = i.instance_id), '-infinity'))) AS t) s "
      "WHERE i.instance_id = $1";
  constexpr std::string_view kSetMetered =
      "UPDATE instance.instances SET metered = $2 WHERE instance_id = $1";
  tx.Exec(kOpenUsage, instance_id, micros_per_hour, currency, close);
  tx.Exec(kSetMetered, instance_id, close ? 2 : 1);
}

void ReconcileRepository::CloseUsage(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kCloseUsage =
      "UPDATE instance.usage u SET end_time = greatest(u.start_time, least(clock_timestamp(), "
      "coalesce(i.workload_stop_time, clock_timestamp()))) "
      "FROM instance.instances i WHERE u.instance_id = $1 AND u.end_time IS NULL "
      "AND i.instance_id = u.instance_id";
  constexpr std::string_view kSetClosed =
      "UPDATE instance.instances SET metered = 2 WHERE instance_id = $1";
  tx.Exec(kCloseUsage, instance_id);
  tx.Exec(kSetClosed, instance_id);
}

void ReconcileRepository::SetDetached(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kSetDetached =
      "UPDATE instance.instances SET attached = false, host_path = '', ceph_mount = '' "
      "WHERE instance_id = $1";
  tx.Exec(kSetDetached, instance_id);
}

void ReconcileRepository::SetReleased(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kSetReleased =
      "UPDATE instance.instances SET held_run = 0, stock_id = '', node_id = '', "
      "gpu_uuids = '{}', mig_partition = '', attached = false, host_path = '', ceph_mount = '', "
      "ports = '', "
      "stop_time = CASE WHEN workload_start_time IS NULL THEN stop_time "
      "ELSE least(clock_timestamp(), coalesce(workload_stop_time, clock_timestamp())) END "
      "WHERE instance_id = $1";
  tx.Exec(kSetReleased, instance_id);
}

void ReconcileRepository::SetStopped(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kSetStopped =
      "UPDATE instance.instances SET state = 5, reason = CASE WHEN reason = 0 THEN 8 ELSE reason "
      "END, "
      "stop_time = coalesce(stop_time, clock_timestamp()) WHERE instance_id = $1";
  tx.Exec(kSetStopped, instance_id);
}

void ReconcileRepository::Tombstone(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kTombstone =
      "UPDATE instance.instances SET state = 7, delete_time = clock_timestamp() "
      "WHERE instance_id = $1";
  tx.Exec(kTombstone, instance_id);
}

void ReconcileRepository::Settle(db::Tx& tx, const std::string& instance_id, bool needs_work) {
  constexpr std::string_view kSettle =
      "UPDATE instance.instances SET needs_work = $2, attempts = 0, "
      "next_attempt_time = clock_timestamp() WHERE instance_id = $1";
  tx.Exec(kSettle, instance_id, needs_work);
}

void ReconcileRepository::Backoff(db::Tx& tx, const std::string& instance_id,
                                  absl::Duration delay) {
  constexpr std::string_view kBackoff =
      "UPDATE instance.instances SET attempts = attempts + 1, "
      "next_attempt_time = clock_timestamp() + $2::int8 * interval '1 microsecond' "
      "WHERE instance_id = $1";
  tx.Exec(kBackoff, instance_id, absl::ToInt64Microseconds(delay));
}

std::vector<std::string> ReconcileRepository::MarkNodesLost(db::Tx& tx, absl::Duration timeout) {
  // A live run of the row (desired RUNNING, PENDING/READY/RUNNING, the run it holds) whose
  // workload had started there starts again as a new run (PENDING NODE_LOST: the way down
  // releases the lost node's stock and storage, the way up claims on a node that reports); one
  // that never started there (the node never ran it) fails. A row already stopping only learns
  // that its workload is gone. Rows another transaction holds are left for the next sweep.
  constexpr std::string_view kMarkNodesLost =
      "WITH lost AS (SELECT node_id, least(last_seen, now()) AS last_seen FROM instance.nodes "
      "  WHERE last_seen < now() - $1::int8 * interval '1 microsecond'), "
      "doomed AS (SELECT i.instance_id, lost.last_seen, "
      "  (i.desired_state = 1 AND i.state IN (1, 2, 3) AND i.held_run = i.run) AS live, "
      "  (i.desired_state = 1 AND i.state IN (1, 2, 3) AND i.held_run = i.run "
      "    AND i.workload_start_time IS NOT NULL) AS again "
      "  FROM instance.instances i JOIN lost ON lost.node_id = i.node_id "
      "  WHERE i.held_run <> 0 AND i.workload_state NOT IN (3, 4, 5) AND (i.published "
      "    OR i.unpublish_time IS NOT NULL "
      "    OR (i.desired_state = 1 AND i.state IN (1, 2, 3) AND i.held_run = i.run)) "
      "  FOR UPDATE OF i SKIP LOCKED) "
      "UPDATE instance.instances i SET "
      "  state = CASE WHEN d.again THEN 1 WHEN d.live THEN 6 ELSE i.state END, "
      "  reason = CASE WHEN d.live THEN 4 ELSE i.reason END, "
      "  message = CASE WHEN d.again THEN 'node ' || i.node_id || "
      "    ' stopped reporting; starting again on another node' "
      "    WHEN d.live THEN 'node ' || i.node_id || ' stopped reporting' ELSE i.message END, "
      "  run = CASE WHEN d.again THEN i.run + 1 ELSE i.run END, "
      "  attempts = CASE WHEN d.again THEN 0 ELSE i.attempts END, "
      "  stop_time = CASE WHEN d.live THEN d.last_seen ELSE i.stop_time END, "
      "  unpublish_time = CASE WHEN i.published THEN now() ELSE i.unpublish_time END, "
      "  published = false, workload_state = 4, "
      "  workload_stop_time = CASE WHEN i.workload_start_time IS NULL THEN NULL "
      "    ELSE greatest(i.workload_start_time, d.last_seen) END, "
      "  needs_work = true, next_attempt_time = now() "
      "FROM doomed d WHERE i.instance_id = d.instance_id RETURNING i.instance_id";
  return tx.Exec(kMarkNodesLost, absl::ToInt64Microseconds(timeout)).Map([](const db::Row& r) {
    return r.Get<std::string>(0);
  });
}

std::vector<std::string> ReconcileRepository::AutoStop(db::Tx& tx) {
  constexpr std::string_view kAutoStop =
      "WITH due AS (SELECT instance_id, "
      "  CASE WHEN max_run_time_s > 0 AND workload_start_time "
      "    + max_run_time_s * interval '1 second' <= now() THEN 9 ELSE 10 END AS why "
      "  FROM instance.instances "
      "  WHERE held_run <> 0 AND (max_run_time_s > 0 OR idle_timeout_s > 0) "
      "    AND held_run = run AND desired_state = 1 AND state IN (2, 3) "
      "    AND workload_start_time IS NOT NULL "
      "    AND ((max_run_time_s > 0 "
      "          AND workload_start_time + max_run_time_s * interval '1 second' <= now()) "
      "      OR (idle_timeout_s > 0 AND last_active_time IS NOT NULL "
      "          AND last_active_time + idle_timeout_s * interval '1 second' <= now())) "
      "  FOR UPDATE SKIP LOCKED) "
      "UPDATE instance.instances i SET desired_state = 2, state = 4, reason = due.why, "
      "  message = CASE WHEN due.why = 9 THEN 'ran for its max_run_time' "
      "    ELSE 'its GPUs were idle for its idle_timeout' END, "
      "  needs_work = true, next_attempt_time = now() "
      "FROM due WHERE i.instance_id = due.instance_id RETURNING i.instance_id";
  return tx.Exec(kAutoStop).Map([](const db::Row& r) { return r.Get<std::string>(0); });
}

int ReconcileRepository::PurgeTombstones(db::Tx& tx, absl::Duration retention) {
  constexpr std::string_view kPurge =
      "WITH gone AS (DELETE FROM instance.instances "
      "  WHERE delete_time < now() - $1::int8 * interval '1 microsecond' "
      "  RETURNING instance_id, revision), "
      "events AS (DELETE FROM instance.events e USING gone WHERE e.instance_id = "
      "gone.instance_id), "
      "horizon AS (UPDATE instance.watch_horizon "
      "  SET purged_revision = GREATEST(purged_revision, (SELECT max(revision) FROM gone)) "
      "  WHERE EXISTS (SELECT 1 FROM gone)) "
      "SELECT count(*) FROM gone";
  return static_cast<int>(
      tx.Exec(kPurge, absl::ToInt64Microseconds(retention)).First()->Get<int64_t>(0));
}

}  // namespace gpuaas::instance
