// Nodes, their labels and GPUs.
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/common/proto_time.h"
#include "libs/common/quantity.h"
#include "services/stock/repository.h"
#include "services/stock/repository_sql.h"

namespace gpuaas::stock {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// A node's rows keyed by node_id, for the reads that assemble several nodes at once.
struct GpuRow {
  pb::Gpu gpu;
  int32_t index = 0;
};

pb::Gpu GpuFromRow(const db::Row& r) {
  pb::Gpu g;
  g.set_uuid(r.Get<std::string>(2));
  g.set_model(r.Get<std::string>(3));
  g.set_memory_mib(r.Get<int64_t>(4));
  g.set_mig_enabled(r.Get<bool>(5));
  g.set_healthy(r.Get<bool>(6));
  g.set_last_xid(r.Get<int32_t>(7));
  return g;
}

// Fills each node's GPUs (with the readings of its last heartbeat) and labels from rows that
// cover node ids in [first, last].
void FillDetails(db::Tx& tx, std::vector<pb::Node>& nodes,
                 const std::vector<std::string>& metrics_blobs) {
  if (nodes.empty()) return;
  constexpr std::string_view kGpusBetween =
      "SELECT node_id, gpu_index, uuid, model, memory_mib, mig_enabled, healthy AND present, "
      "last_xid FROM stock.gpus WHERE node_id BETWEEN $1 AND $2 ORDER BY node_id, gpu_index";
  constexpr std::string_view kLabelsBetween =
      "SELECT node_id, key, value FROM stock.node_labels WHERE node_id BETWEEN $1 AND $2";
  absl::flat_hash_map<std::string, pb::Node*> by_id;
  for (pb::Node& n : nodes) by_id[n.node_id()] = &n;
  const std::string& first = nodes.front().node_id();
  const std::string& last = nodes.back().node_id();
  for (const db::Row& r : tx.Exec(kGpusBetween, first, last)) {
    auto it = by_id.find(r.Get<std::string>(0));
    if (it != by_id.end()) *it->second->add_gpus() = GpuFromRow(r);
  }
  for (const db::Row& r : tx.Exec(kLabelsBetween, first, last)) {
    auto it = by_id.find(r.Get<std::string>(0));
    if (it != by_id.end())
      (*it->second->mutable_labels())[r.Get<std::string>(1)] = r.Get<std::string>(2);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    pb::HeartbeatRequest readings;
    if (!readings.ParseFromString(metrics_blobs[i])) continue;
    absl::flat_hash_map<std::string, const pb::GpuMetrics*> by_uuid;
    for (const pb::GpuMetrics& m : readings.gpus()) by_uuid[m.uuid()] = &m;
    for (pb::Gpu& g : *nodes[i].mutable_gpus()) {
      auto it = by_uuid.find(g.uuid());
      if (it == by_uuid.end()) continue;
      g.set_utilization_percent(it->second->utilization_percent());
      g.set_memory_used_mib(it->second->memory_used_mib());
      g.set_temperature_celsius(it->second->temperature_celsius());
      g.set_power_watts(it->second->power_watts());
    }
  }
}

// clang-format off
#define GPUAAS_NODE_FROM                                                                   \
  "SELECT node_id, hostname, cpu_millis, memory_bytes, disk_bytes, agent_version, ready, " \
  "cordoned, " GPUAAS_SQL_MICROS("heartbeat_time") ", " GPUAAS_SQL_MICROS("create_time")  \
  ", gpu_metrics FROM stock.nodes "
// clang-format on

std::vector<pb::Node> ReadNodes(db::Tx& tx, const db::Result& rows) {
  std::vector<pb::Node> nodes;
  std::vector<std::string> metrics;
  for (const db::Row& r : rows) {
    pb::Node& n = nodes.emplace_back();
    n.set_node_id(r.Get<std::string>(0));
    n.set_hostname(r.Get<std::string>(1));
    n.set_cpu(FormatCpuMillis(r.Get<int64_t>(2)));
    n.set_memory(FormatBytes(r.Get<int64_t>(3)));
    n.set_disk(FormatBytes(r.Get<int64_t>(4)));
    n.set_agent_version(r.Get<std::string>(5));
    n.set_state(r.Get<bool>(6) ? pb::NODE_STATE_READY : pb::NODE_STATE_NOT_READY);
    n.set_cordoned(r.Get<bool>(7));
    *n.mutable_heartbeat_time() = ToProtoTime(r.GetTime(8));
    *n.mutable_create_time() = ToProtoTime(r.GetTime(9));
    metrics.push_back(r.GetBytes(10));
  }
  FillDetails(tx, nodes, metrics);
  return nodes;
}

}  // namespace

std::vector<NodeRecord> Repository::LoadNodeRecords(db::Tx& tx,
                                                    const std::optional<std::string>& node_id) {
  constexpr std::string_view kNodes =
      "SELECT node_id, generation, cpu_millis, memory_bytes, disk_bytes, ready AND NOT cordoned "
      "FROM stock.nodes WHERE ($1 = '' OR node_id = $1) ORDER BY node_id";
  constexpr std::string_view kGpus =
      "SELECT node_id, gpu_index, model, memory_mib, mig_enabled, healthy AND present "
      "FROM stock.gpus WHERE ($1 = '' OR node_id = $1) ORDER BY node_id, gpu_index";
  constexpr std::string_view kLabels =
      "SELECT node_id, key, value FROM stock.node_labels WHERE ($1 = '' OR node_id = $1)";
  const std::string which = node_id.value_or("");
  std::vector<NodeRecord> out;
  absl::flat_hash_map<std::string, size_t> at;
  for (const db::Row& r : tx.Exec(kNodes, which)) {
    NodeRecord& n = out.emplace_back();
    n.generation = r.Get<int64_t>(1);
    n.spec.name = r.Get<std::string>(0);
    n.spec.cpu_milli = r.Get<int64_t>(2);
    n.spec.memory_bytes = r.Get<int64_t>(3);
    n.spec.disk_bytes = r.Get<int64_t>(4);
    n.spec.schedulable = r.Get<bool>(5);
    at[n.spec.name] = out.size() - 1;
  }
  for (const db::Row& r : tx.Exec(kGpus, which)) {
    auto it = at.find(r.Get<std::string>(0));
    if (it == at.end()) continue;
    out[it->second].spec.gpus.push_back(sched::GpuSpec{.index = r.Get<int32_t>(1),
                                                       .model = r.Get<std::string>(2),
                                                       .memory_bytes = r.Get<int64_t>(3) * kMiB,
                                                       .healthy = r.Get<bool>(5),
                                                       .mig_enabled = r.Get<bool>(4)});
  }
  for (const db::Row& r : tx.Exec(kLabels, which)) {
    auto it = at.find(r.Get<std::string>(0));
    if (it != at.end()) out[it->second].spec.labels[r.Get<std::string>(1)] = r.Get<std::string>(2);
  }
  return out;
}

absl::flat_hash_map<std::string, int64_t> Repository::NodeGenerations(db::Tx& tx) {
  constexpr std::string_view kGenerations = "SELECT node_id, generation FROM stock.nodes";
  absl::flat_hash_map<std::string, int64_t> out;
  for (const db::Row& r : tx.Exec(kGenerations)) out[r.Get<std::string>(0)] = r.Get<int64_t>(1);
  return out;
}

std::vector<std::string> Repository::GuardGenerations(
    db::Tx& tx, const std::vector<std::pair<std::string, int64_t>>& seen) {
  // Lock in name order first, so two writers guarding overlapping nodes never deadlock.
  constexpr std::string_view kLockNodes =
      "SELECT node_id FROM stock.nodes WHERE node_id = ANY (string_to_array($1, ',')) "
      "ORDER BY node_id FOR UPDATE";
  constexpr std::string_view kGuard =
      "UPDATE stock.nodes n SET generation = n.generation + 1 "
      "FROM unnest(string_to_array($1, ','), string_to_array($2, ',')::int8[]) AS g(id, seen) "
      "WHERE n.node_id = g.id AND n.generation = g.seen RETURNING n.node_id";
  if (seen.empty()) return {};
  std::vector<std::string> ids, generations;
  for (const auto& [id, generation] : seen) {
    ids.push_back(id);
    generations.push_back(absl::StrCat(generation));
  }
  const std::string joined = absl::StrJoin(ids, ",");
  tx.Exec(kLockNodes, joined);
  absl::flat_hash_set<std::string> advanced;
  for (const db::Row& r : tx.Exec(kGuard, joined, absl::StrJoin(generations, ","))) {
    advanced.insert(r.Get<std::string>(0));
  }
  std::vector<std::string> stale;
  for (const std::string& id : ids) {
    if (!advanced.contains(id)) stale.push_back(id);
  }
  return stale;
}

std::vector<std::pair<std::string, int64_t>> Repository::BumpGenerations(
    db::Tx& tx, const std::vector<std::string>& node_ids) {
  constexpr std::string_view kBump =
      "UPDATE stock.nodes SET generation = generation + 1 "
      "WHERE node_id = ANY (string_to_array($1, ',')) RETURNING node_id, generation";
  if (node_ids.empty()) return {};
  return tx.Exec(kBump, absl::StrJoin(node_ids, ",")).Map([](const db::Row& r) {
    return std::make_pair(r.Get<std::string>(0), r.Get<int64_t>(1));
  });
}

void Repository::BumpGeneration(db::Tx& tx, const std::string& node_id) {
  BumpGenerations(tx, {node_id});
}

void Repository::UpsertNode(db::Tx& tx, const pb::Node& node, int64_t cpu_millis,
                            int64_t memory_bytes, int64_t disk_bytes) {
  constexpr std::string_view kUpsertNode =
      "INSERT INTO stock.nodes (node_id, hostname, cpu_millis, memory_bytes, disk_bytes, "
      "agent_version) VALUES ($1, $2, $3, $4, $5, $6) "
      "ON CONFLICT (node_id) DO UPDATE SET hostname = EXCLUDED.hostname, "
      "cpu_millis = EXCLUDED.cpu_millis, memory_bytes = EXCLUDED.memory_bytes, "
      "disk_bytes = EXCLUDED.disk_bytes, agent_version = EXCLUDED.agent_version, ready = true, "
      "heartbeat_time = now(), generation = stock.nodes.generation + 1";
  constexpr std::string_view kClearLabels = "DELETE FROM stock.node_labels WHERE node_id = $1";
  constexpr std::string_view kInsertLabel =
      "INSERT INTO stock.node_labels (node_id, key, value) VALUES ($1, $2, $3)";
  constexpr std::string_view kForgetGpus =
      "UPDATE stock.gpus SET present = false WHERE node_id = $1";
  constexpr std::string_view kUpsertGpu =
      "INSERT INTO stock.gpus (node_id, gpu_index, uuid, model, memory_mib, mig_enabled, "
      "healthy, last_xid) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
      "ON CONFLICT (node_id, gpu_index) DO UPDATE SET uuid = EXCLUDED.uuid, "
      "model = EXCLUDED.model, memory_mib = EXCLUDED.memory_mib, "
      "mig_enabled = EXCLUDED.mig_enabled, healthy = EXCLUDED.healthy, present = true, "
      "last_xid = EXCLUDED.last_xid";
  tx.Exec(kUpsertNode, node.node_id(), node.hostname(), cpu_millis, memory_bytes, disk_bytes,
          node.agent_version());
  tx.Exec(kClearLabels, node.node_id());
  for (const auto& [key, value] : node.labels()) tx.Exec(kInsertLabel, node.node_id(), key, value);
  tx.Exec(kForgetGpus, node.node_id());
  for (int32_t i = 0; i < node.gpus_size(); ++i) {
    const pb::Gpu& g = node.gpus(i);
    tx.Exec(kUpsertGpu, node.node_id(), i, g.uuid(), g.model(), g.memory_mib(), g.mig_enabled(),
            g.healthy(), g.last_xid());
  }
}

std::optional<pb::Node> Repository::GetNode(db::Tx& tx, const std::string& node_id) {
  constexpr std::string_view kGetNode = GPUAAS_NODE_FROM "WHERE node_id = $1";
  std::vector<pb::Node> nodes = ReadNodes(tx, tx.Exec(kGetNode, node_id));
  if (nodes.empty()) return std::nullopt;
  return std::move(nodes.front());
}

std::vector<pb::Node> Repository::ListNodes(db::Tx& tx, const service::PageRequest& page) {
  constexpr std::string_view kListNodes =
      GPUAAS_NODE_FROM "WHERE node_id > $1 ORDER BY node_id LIMIT $2";
  return ReadNodes(tx, tx.Exec(kListNodes, page.after, page.limit));
}

std::optional<Repository::NodeStatus> Repository::RecordHeartbeat(
    db::Tx& tx, const pb::HeartbeatRequest& heartbeat) {
  constexpr std::string_view kHeartbeat =
      "UPDATE stock.nodes SET heartbeat_time = now(), gpu_metrics = $2 WHERE node_id = $1 "
      "RETURNING ready, cordoned";
  std::optional<db::Row> row =
      tx.Exec(kHeartbeat, heartbeat.node_id(), db::Bytes{heartbeat.SerializeAsString()}).First();
  if (!row) return std::nullopt;
  return NodeStatus{.ready = row->Get<bool>(0), .cordoned = row->Get<bool>(1)};
}

bool Repository::SetGpuHealth(db::Tx& tx, const std::string& node_id, const std::string& uuid,
                              bool healthy, int32_t last_xid) {
  constexpr std::string_view kSetHealth =
      "UPDATE stock.gpus SET healthy = $3, last_xid = $4 WHERE node_id = $1 AND uuid = $2";
  return tx.Exec(kSetHealth, node_id, uuid, healthy, last_xid).affected_rows() == 1;
}

bool Repository::MarkReady(db::Tx& tx, const std::string& node_id) {
  constexpr std::string_view kMarkReady =
      "UPDATE stock.nodes SET ready = true, heartbeat_time = now(), "
      "generation = generation + 1 WHERE node_id = $1 AND NOT ready";
  return tx.Exec(kMarkReady, node_id).affected_rows() == 1;
}

std::vector<std::string> Repository::MarkLostNodes(db::Tx& tx, const NodeSilence& silence) {
  constexpr std::string_view kMarkLost =
      "UPDATE stock.nodes n SET ready = false, generation = n.generation + 1 "
      "WHERE n.ready AND NOT " GPUAAS_NODE_HEARD("$1", "$2") " RETURNING n.node_id";
  return tx.Exec(kMarkLost, absl::ToInt64Microseconds(silence.timeout), silence.listening_since)
      .Map([](const db::Row& r) { return r.Get<std::string>(0); });
}

absl::Time Repository::DatabaseNow(db::Tx& tx) {
  constexpr std::string_view kNow = "SELECT " GPUAAS_SQL_MICROS("now()");
  return tx.Exec(kNow).First()->GetTime(0);
}

std::vector<std::pair<std::string, bool>> Repository::NodeReadiness(db::Tx& tx) {
  constexpr std::string_view kNodeReadiness =
      "SELECT node_id, ready FROM stock.nodes ORDER BY node_id";
  return tx.Exec(kNodeReadiness).Map([](const db::Row& r) {
    return std::make_pair(r.Get<std::string>(0), r.Get<bool>(1));
  });
}

bool Repository::SetCordon(db::Tx& tx, const std::string& node_id, bool cordoned, bool draining) {
  constexpr std::string_view kSetCordon =
      "UPDATE stock.nodes SET cordoned = $2, draining = $3, generation = generation + 1 "
      "WHERE node_id = $1";
  return tx.Exec(kSetCordon, node_id, cordoned, draining).affected_rows() == 1;
}

void Repository::RefreshStockStates(db::Tx& tx, const std::string& node_id) {
  // The outer `state IN (1, 3)` is re-checked on rows a concurrent claim changed, so a stock
  // claimed meanwhile keeps CLAIMED.
  constexpr std::string_view kRefresh =
      "UPDATE stock.stocks s SET state = w.want, update_time = now() FROM ("
      " SELECT s.stock_id, " GPUAAS_UNCLAIMED_STATE
      " AS want"
      " FROM stock.stocks s JOIN stock.nodes n ON n.node_id = s.node_id"
      " WHERE s.node_id = $1 AND s.state IN (1, 3)) w "
      "WHERE s.stock_id = w.stock_id AND s.state IN (1, 3) AND s.state <> w.want";
  PlanForParameters(tx);
  tx.Exec(kRefresh, node_id);
}

}  // namespace gpuaas::stock
