// The agents' side: instance.nodes, the node sets and what reports write. Node ids are DNS
// names and instance ids [a-z0-9-], so lists of them travel as one ','-joined text.
#include "absl/strings/str_join.h"
#include "services/instance/repository_reconcile.h"
#include "services/instance/repository_reconcile_sql.h"

// Binds epoch microseconds ($n::int8, NULL for none) as a timestamptz, exactly (the float
// division of GPUAAS_SQL_FROM_MICROS may move a time read back by a microsecond, which would
// count as a change).
#define GPUAAS_SQL_EXACT_MICROS(param) \
  "('epoch'::timestamptz + " param "::int8 * interval '1 microsecond')"

namespace gpuaas::instance {

std::string ReconcileRepository::SeeNode(db::Tx& tx, const std::string& node_id,
                                         const std::string& address) {
  constexpr std::string_view kSeeNode =
      "INSERT INTO instance.nodes (node_id, address, last_seen) VALUES ($1, $2, now()) "
      "ON CONFLICT (node_id) DO UPDATE SET last_seen = now(), "
      "address = CASE WHEN $2 = '' THEN instance.nodes.address ELSE $2 END RETURNING address";
  return tx.Exec(kSeeNode, node_id, address).First()->Get<std::string>(0);
}

void ReconcileRepository::TouchNodes(db::Tx& tx, const std::vector<std::string>& node_ids) {
  constexpr std::string_view kTouchNodes =
      "UPDATE instance.nodes SET last_seen = now() "
      "WHERE node_id = ANY(string_to_array($1, ','))";
  if (node_ids.empty()) return;
  tx.Exec(kTouchNodes, absl::StrJoin(node_ids, ","));
}

std::vector<WorkRow> ReconcileRepository::PublishedOn(db::Tx& tx, const std::string& node_id) {
  constexpr std::string_view kPublishedOn =
      GPUAAS_WORK_FROM "WHERE published AND node_id = $1 ORDER BY instance_id";
  return tx.Exec(kPublishedOn, node_id).Map(WorkRowFromRow);
}

std::vector<WorkRow> ReconcileRepository::LockHeldOn(db::Tx& tx, const std::string& node_id,
                                                     const std::vector<std::string>& instance_ids) {
  constexpr std::string_view kLockHeldOn = GPUAAS_WORK_FROM
      "WHERE held_run <> 0 AND node_id = $1 AND instance_id = ANY(string_to_array($2, ',')) "
      "ORDER BY instance_id FOR UPDATE";
  if (instance_ids.empty()) return {};
  return tx.Exec(kLockHeldOn, node_id, absl::StrJoin(instance_ids, ",")).Map(WorkRowFromRow);
}

std::vector<WorkRow> ReconcileRepository::LockOthersHeldOn(
    db::Tx& tx, const std::string& node_id, const std::vector<std::string>& instance_ids) {
  constexpr std::string_view kLockOthersHeldOn = GPUAAS_WORK_FROM
      "WHERE held_run <> 0 AND node_id = $1 "
      "AND NOT (instance_id = ANY(string_to_array($2, ','))) "
      "ORDER BY instance_id FOR UPDATE SKIP LOCKED";
  return tx.Exec(kLockOthersHeldOn, node_id, absl::StrJoin(instance_ids, ",")).Map(WorkRowFromRow);
}

void ReconcileRepository::WriteReported(db::Tx& tx, const WorkRow& row, bool wake) {
  constexpr std::string_view kWriteReported =
      "UPDATE instance.instances SET state = $2, reason = $3, message = $4, exit_code = $5, "
      "start_time = " GPUAAS_SQL_EXACT_MICROS("$6") ", stop_time = " GPUAAS_SQL_EXACT_MICROS(
          "$7") ", ports = $8, published = $9, unpublish_time = " GPUAAS_SQL_EXACT_MICROS("$10") ", "
      "workload_state = $11, workload_start_time = " GPUAAS_SQL_EXACT_MICROS("$12") ", "
      "workload_stop_time = " GPUAAS_SQL_EXACT_MICROS("$13") ", "
      "last_active_time = " GPUAAS_SQL_EXACT_MICROS("$14") ", "
      "needs_work = needs_work OR $15, "
      "next_attempt_time = CASE WHEN $15 THEN least(next_attempt_time, clock_timestamp()) "
      "ELSE next_attempt_time END WHERE instance_id = $1";
  pb::Instance ports;
  *ports.mutable_ports() = row.ports;
  tx.Exec(kWriteReported, row.instance_id, row.state, row.reason, row.message, row.exit_code,
          row.start_time, row.stop_time, db::Bytes{ports.SerializeAsString()}, row.published,
          row.unpublish_time, row.workload_state, row.workload_start_time, row.workload_stop_time,
          row.last_active_time, wake);
}

void ReconcileRepository::AddEventUnlessLatest(db::Tx& tx, const WorkRow& row,
                                               const std::string& message) {
  constexpr std::string_view kAddEvent =
      "INSERT INTO instance.events (instance_id, state, reason, message) "
      "SELECT $1, $2, 0, $3 WHERE (SELECT message FROM instance.events WHERE instance_id = $1 "
      "ORDER BY seq DESC LIMIT 1) IS DISTINCT FROM $3";
  tx.Exec(kAddEvent, row.instance_id, row.state, message);
}

}  // namespace gpuaas::instance
