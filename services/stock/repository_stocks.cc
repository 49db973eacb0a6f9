// Stocks, claims and the answers of stock operations. States are StockState numbers:
// 1 AVAILABLE, 2 CLAIMED, 3 UNAVAILABLE.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libs/common/proto_time.h"
#include "services/stock/repository.h"
#include "services/stock/repository_sql.h"

namespace gpuaas::stock {
namespace {

// clang-format off
#define GPUAAS_STOCK_COLUMNS                                                                \
  "s.stock_id, s.spec_name, s.node_id, s.state, s.instance_id, s.mig_profile, "            \
  "s.mig_start_slice, (SELECT string_agg(g.uuid, ',' ORDER BY g.gpu_index) "               \
  "FROM stock.stock_gpus sg JOIN stock.gpus g "                                              \
  "ON g.node_id = sg.node_id AND g.gpu_index = sg.gpu_index WHERE sg.stock_id = s.stock_id), " \
  GPUAAS_SQL_MICROS("s.create_time") ", " GPUAAS_SQL_MICROS("s.update_time")
#define GPUAAS_STOCK_FROM "SELECT " GPUAAS_STOCK_COLUMNS " FROM stock.stocks s "

// clang-format on

pb::Stock StockFromRow(const db::Row& r) {
  pb::Stock s;
  s.set_stock_id(r.Get<std::string>(0));
  s.set_spec_name(r.Get<std::string>(1));
  s.set_node_id(r.Get<std::string>(2));
  s.set_state(r.GetEnum<pb::StockState>(3));
  s.set_instance_id(r.GetOptional<std::string>(4).value_or(""));
  if (std::string profile = r.Get<std::string>(5); !profile.empty()) {
    s.set_mig_partition(absl::StrCat(profile, "@", r.Get<int32_t>(6)));
  }
  if (std::optional<std::string> uuids = r.GetOptional<std::string>(7)) {
    for (absl::string_view u : absl::StrSplit(*uuids, ',')) s.add_gpu_uuids(std::string(u));
  }
  *s.mutable_create_time() = ToProtoTime(r.GetTime(8));
  *s.mutable_update_time() = ToProtoTime(r.GetTime(9));
  return s;
}

}  // namespace

void Repository::InsertStocks(db::Tx& tx, const std::vector<std::string>& stock_ids,
                              const std::string& spec_name,
                              const std::vector<sched::Placement>& placements) {
  // Two statements for any number of stocks: each column travels as one comma-separated text
  // (ids, node names and profiles never hold ','; "-" stands for no MIG profile).
  constexpr std::string_view kInsertStocks =
      "INSERT INTO stock.stocks (stock_id, spec_name, node_id, state, cpu_millis, memory_bytes, "
      "disk_bytes, mig_profile, mig_start_slice, mig_slices) "
      "SELECT t.id, $2, t.node, 1, t.cpu, t.mem, t.disk, "
      "CASE WHEN t.profile = '-' THEN '' ELSE t.profile END, t.start, t.slices "
      "FROM unnest(string_to_array($1, ','), string_to_array($3, ','), "
      "string_to_array($4, ',')::int8[], string_to_array($5, ',')::int8[], "
      "string_to_array($6, ',')::int8[], string_to_array($7, ','), "
      "string_to_array($8, ',')::int4[], string_to_array($9, ',')::int4[]) "
      "AS t(id, node, cpu, mem, disk, profile, start, slices)";
  constexpr std::string_view kInsertStockGpus =
      "INSERT INTO stock.stock_gpus (stock_id, node_id, gpu_index, milli) "
      "SELECT * FROM unnest(string_to_array($1, ','), string_to_array($2, ','), "
      "string_to_array($3, ',')::int4[], string_to_array($4, ',')::int4[])";
  if (stock_ids.empty()) return;
  std::vector<std::string> node, cpu, mem, disk, profile, start, slices;
  std::vector<std::string> g_stock, g_node, g_index, g_milli;
  const auto gpu = [&](const std::string& id, const std::string& on, int32_t index, int32_t milli) {
    g_stock.push_back(id);
    g_node.push_back(on);
    g_index.push_back(absl::StrCat(index));
    g_milli.push_back(absl::StrCat(milli));
  };
  for (size_t i = 0; i < stock_ids.size(); ++i) {
    const sched::Placement& p = placements[i];
    node.push_back(p.node);
    cpu.push_back(absl::StrCat(p.cpu_milli));
    mem.push_back(absl::StrCat(p.memory_bytes));
    disk.push_back(absl::StrCat(p.disk_bytes));
    profile.push_back(p.mig ? p.mig->profile : "-");
    start.push_back(absl::StrCat(p.mig ? p.mig->start_slice : 0));
    slices.push_back(absl::StrCat(p.mig ? p.mig->slices : 0));
    for (const sched::GpuAssignment& g : p.gpus) gpu(stock_ids[i], p.node, g.index, g.milli);
    if (p.mig) gpu(stock_ids[i], p.node, p.mig->gpu_index, 0);
  }
  const auto join = [](const std::vector<std::string>& v) { return absl::StrJoin(v, ","); };
  tx.Exec(kInsertStocks, join(stock_ids), spec_name, join(node), join(cpu), join(mem), join(disk),
          join(profile), join(start), join(slices));
  if (!g_stock.empty()) {
    tx.Exec(kInsertStockGpus, join(g_stock), join(g_node), join(g_index), join(g_milli));
  }
}

std::vector<StockRecord> Repository::LoadStockRecords(db::Tx& tx,
                                                      const std::optional<std::string>& node_id) {
  constexpr std::string_view kStocks =
      "SELECT stock_id, spec_name, node_id, cpu_millis, memory_bytes, disk_bytes, mig_profile, "
      "mig_start_slice, mig_slices FROM stock.stocks WHERE ($1 = '' OR node_id = $1)";
  constexpr std::string_view kStockGpus =
      "SELECT stock_id, gpu_index, milli FROM stock.stock_gpus WHERE ($1 = '' OR node_id = $1) "
      "ORDER BY stock_id, gpu_index";
  const std::string which = node_id.value_or("");
  std::vector<StockRecord> out;
  absl::flat_hash_map<std::string, size_t> at;
  for (const db::Row& r : tx.Exec(kStocks, which)) {
    StockRecord& s = out.emplace_back();
    s.stock_id = r.Get<std::string>(0);
    s.spec_name = r.Get<std::string>(1);
    s.placement.node = r.Get<std::string>(2);
    s.placement.cpu_milli = r.Get<int64_t>(3);
    s.placement.memory_bytes = r.Get<int64_t>(4);
    s.placement.disk_bytes = r.Get<int64_t>(5);
    if (std::string profile = r.Get<std::string>(6); !profile.empty()) {
      s.placement.mig = sched::MigAssignment{.profile = std::move(profile),
                                             .start_slice = r.Get<int32_t>(7),
                                             .slices = r.Get<int32_t>(8)};
    }
    at[s.stock_id] = out.size() - 1;
  }
  for (const db::Row& r : tx.Exec(kStockGpus, which)) {
    auto it = at.find(r.Get<std::string>(0));
    if (it == at.end()) continue;
    sched::Placement& p = out[it->second].placement;
    const int32_t index = r.Get<int32_t>(1);
    const int32_t milli = r.Get<int32_t>(2);
    if (milli == 0 && p.mig) {
      p.mig->gpu_index = index;
    } else {
      p.gpus.push_back({.index = index, .milli = milli});
    }
  }
  return out;
}

std::vector<pb::Stock> Repository::GetStocks(db::Tx& tx, const std::vector<std::string>& ids) {
  // One round trip for a thousand stocks: ids (never holding ',') travel as one text.
  constexpr std::string_view kGetStocks =
      GPUAAS_STOCK_FROM "WHERE s.stock_id = ANY (string_to_array($1, ',')) ORDER BY s.stock_id";
  if (ids.empty()) return {};
  return tx.Exec(kGetStocks, absl::StrJoin(ids, ",")).Map(StockFromRow);
}

std::vector<pb::Stock> Repository::ListStocks(db::Tx& tx, const StockFilter& f,
                                              const service::PageRequest& page) {
  constexpr std::string_view kListStocks = GPUAAS_STOCK_FROM
      "WHERE s.stock_id > $1 AND ($2 = '' OR s.spec_name = $2) AND ($3 = 0 OR s.state = $3) "
      "AND ($4 = '' OR s.node_id = $4) AND ($5 = '' OR s.spec_name LIKE $5) "
      "ORDER BY s.stock_id LIMIT $6";
  return tx
      .Exec(kListStocks, page.after, f.spec_name, f.state, f.node_id, f.spec_pattern, page.limit)
      .Map(StockFromRow);
}

std::vector<pb::StockCount> Repository::CountStocks(db::Tx& tx, const std::string& spec_name) {
  constexpr std::string_view kCountStocks =
      "SELECT spec_name, count(*), count(*) FILTER (WHERE state = 1), "
      "count(*) FILTER (WHERE state = 2), count(*) FILTER (WHERE state = 3), "
      "count(*) FILTER (WHERE state = 4) FROM stock.stocks WHERE ($1 = '' OR spec_name = $1) "
      "GROUP BY spec_name ORDER BY spec_name";
  return tx.Exec(kCountStocks, spec_name).Map([](const db::Row& r) {
    pb::StockCount c;
    c.set_spec_name(r.Get<std::string>(0));
    c.set_total(r.Get<int64_t>(1));
    c.set_available(r.Get<int64_t>(2));
    c.set_claimed(r.Get<int64_t>(3));
    c.set_unavailable(r.Get<int64_t>(4));
    c.set_deleting(r.Get<int64_t>(5));
    return c;
  });
}

std::optional<pb::Stock> Repository::StockOfInstance(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kStockOfInstance = GPUAAS_STOCK_FROM "WHERE s.instance_id = $1";
  std::optional<db::Row> row = tx.Exec(kStockOfInstance, instance_id).First();
  if (!row) return std::nullopt;
  return StockFromRow(*row);
}

std::optional<pb::Stock> Repository::ClaimAvailable(db::Tx& tx, const std::string& spec_name,
                                                    const std::string& instance_id,
                                                    const NodeSilence& silence) {
  // SKIP LOCKED: concurrent claims each take a different row instead of queueing on one.
  constexpr std::string_view kClaim =
      "UPDATE stock.stocks s SET state = 2, instance_id = $2, update_time = now() "
      "WHERE s.stock_id = (SELECT c.stock_id FROM stock.stocks c JOIN stock.nodes n "
      " ON n.node_id = c.node_id WHERE c.spec_name = $1 AND c.state = 1 AND n.ready "
      " AND " GPUAAS_NODE_HEARD("$3", "$4") " "
      " ORDER BY c.stock_id LIMIT 1 FOR UPDATE OF c SKIP LOCKED) AND s.state = 1 "
      "RETURNING " GPUAAS_STOCK_COLUMNS;
  std::optional<db::Row> row =
      tx.Exec(kClaim, spec_name, instance_id, absl::ToInt64Microseconds(silence.timeout),
              silence.listening_since)
          .First();
  if (!row) return std::nullopt;
  return StockFromRow(*row);
}

std::optional<Repository::Released> Repository::Release(db::Tx& tx,
                                                        const std::string& instance_id) {
  constexpr std::string_view kRelease =
      "UPDATE stock.stocks s SET state = " GPUAAS_UNCLAIMED_STATE
      ", instance_id = NULL, "
      "update_time = now() FROM stock.nodes n WHERE n.node_id = s.node_id "
      "AND s.instance_id = $1 RETURNING s.stock_id, s.node_id, n.draining";
  std::optional<db::Row> row = tx.Exec(kRelease, instance_id).First();
  if (!row) return std::nullopt;
  return Released{.stock_id = row->Get<std::string>(0),
                  .node_id = row->Get<std::string>(1),
                  .node_draining = row->Get<bool>(2)};
}

void Repository::PlanForParameters(db::Tx& tx) {
  tx.ExecScript("SET LOCAL plan_cache_mode = force_custom_plan");
}

Repository::Unclaimed Repository::LockUnclaimedOfSpec(db::Tx& tx, const std::string& spec_name) {
  constexpr std::string_view kLockOfSpec =
      "SELECT stock_id, state FROM stock.stocks WHERE spec_name = $1 AND state IN (1, 3) "
      "ORDER BY stock_id FOR UPDATE SKIP LOCKED";
  Unclaimed out;
  for (const db::Row& r : tx.Exec(kLockOfSpec, spec_name)) {
    (r.Get<int>(1) == 3 ? out.unavailable : out.available).push_back(r.Get<std::string>(0));
  }
  return out;
}

std::vector<std::string> Repository::LockUnclaimedOnNode(db::Tx& tx, const std::string& node_id) {
  constexpr std::string_view kLockOnNode =
      "SELECT stock_id FROM stock.stocks WHERE node_id = $1 AND state IN (1, 3) "
      "ORDER BY stock_id FOR UPDATE SKIP LOCKED";
  return tx.Exec(kLockOnNode, node_id).Map([](const db::Row& r) { return r.Get<std::string>(0); });
}

std::vector<std::string> Repository::DeleteStocks(db::Tx& tx,
                                                  const std::vector<std::string>& stock_ids) {
  constexpr std::string_view kDeleteStocks =
      "DELETE FROM stock.stocks WHERE stock_id = ANY (string_to_array($1, ',')) "
      "RETURNING node_id";
  if (stock_ids.empty()) return {};
  return tx.Exec(kDeleteStocks, absl::StrJoin(stock_ids, ",")).Map([](const db::Row& r) {
    return r.Get<std::string>(0);
  });
}

void Repository::SaveOperation(db::Tx& tx, const std::string& key,
                               const google::protobuf::Message& response) {
  constexpr std::string_view kSaveOperation =
      "INSERT INTO stock.operations (operation_key, response) VALUES ($1, $2)";
  tx.Exec(kSaveOperation, key, db::Bytes{response.SerializeAsString()});
}

bool Repository::LoadOperation(db::Tx& tx, const std::string& key,
                               google::protobuf::Message& response) {
  constexpr std::string_view kLoadOperation =
      "SELECT response FROM stock.operations WHERE operation_key = $1";
  std::optional<db::Row> row = tx.Exec(kLoadOperation, key).First();
  return row && response.ParseFromString(row->GetBytes(0));
}

}  // namespace gpuaas::stock
