#include "tools/gpuaasctl/stock_tables.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/gpuaasctl/output.h"
#include "tools/gpuaasctl/price.h"
#include "tools/gpuaasctl/stock_names.h"

namespace gpuaas::ctl {
namespace {

std::string GpuCell(const stockpb::Spec& s) {
  if (s.gpu_share_milli() > 0) {
    return absl::StrCat(FormatMilli(s.gpu_share_milli()), "x", s.gpu_type());
  }
  std::string out = absl::StrCat(s.gpu_num(), "x", s.gpu_type());
  if (!s.mig_profile().empty()) {
    absl::StrAppend(&out, ":", s.mig_profile());
  }
  return out;
}

std::string GpuSummary(const stockpb::Node& n) {
  std::map<std::string, int> by_model;
  for (const auto& g : n.gpus()) {
    ++by_model[g.model()];
  }
  std::vector<std::string> parts;
  for (const auto& [model, count] : by_model) {
    parts.push_back(absl::StrCat(count, "x", model));
  }
  return absl::StrJoin(parts, ",");
}

int Unhealthy(const stockpb::Node& n) {
  int count = 0;
  for (const auto& g : n.gpus()) {
    count += g.healthy() ? 0 : 1;
  }
  return count;
}

}  // namespace

std::string SpecTable(const google::protobuf::RepeatedPtrField<stockpb::Spec>& specs) {
  Table t({"SPEC", "GPU", "CPU", "MEMORY", "DISK", "PRICE/H", "CURRENCY", "DEPRECATED", "CREATED",
           "DESCRIPTION"});
  for (const auto& s : specs) {
    t.AddRow({s.spec_name(), GpuCell(s), s.cpu(), s.memory(), s.disk(),
              FormatPriceMicros(s.price().micros_per_hour()), s.price().currency(),
              s.deprecated() ? "yes" : "no", FormatTimestamp(s.create_time()), s.description()});
  }
  return t.Render();
}

std::string StockTable(const google::protobuf::RepeatedPtrField<stockpb::Stock>& stocks) {
  Table t({"STOCK", "SPEC", "NODE", "STATE", "GPUS", "MIG", "INSTANCE", "CREATED"});
  for (const auto& x : stocks) {
    t.AddRow({x.stock_id(), x.spec_name(), x.node_id(), StockStateName(x.state()),
              absl::StrJoin(x.gpu_uuids(), ","), x.mig_partition(), x.instance_id(),
              FormatTimestamp(x.create_time())});
  }
  return t.Render();
}

std::string StockSummaryTable(const stockpb::GetStockSummaryResponse& summary) {
  Table t({"SPEC", "TOTAL", "AVAILABLE", "CLAIMED", "UNAVAILABLE", "DELETING"});
  for (const auto& c : summary.counts()) {
    t.AddRow({c.spec_name(), absl::StrCat(c.total()), absl::StrCat(c.available()),
              absl::StrCat(c.claimed()), absl::StrCat(c.unavailable()),
              absl::StrCat(c.deleting())});
  }
  return t.Render();
}

std::string CreateStocksText(const stockpb::CreateStocksResponse& resp, int asked,
                             const std::string& operation_id) {
  Fields out;
  out.Add("placed", absl::StrCat(resp.placed(), " of ", asked));
  if (resp.placed() < asked || !resp.shortfall_reason().empty()) {
    out.Add("shortfall", resp.shortfall_reason());
  }
  out.Add("operation id", operation_id);
  std::string text = out.Render();
  if (resp.stocks_size() > 0) {
    absl::StrAppend(&text, "\n", StockTable(resp.stocks()));
  }
  return text;
}

std::string DeleteStocksText(const stockpb::DeleteStocksResponse& resp, int asked,
                             const std::string& operation_id) {
  Fields out;
  out.Add("deleted", absl::StrCat(resp.deleted(), " of ", asked));
  if (resp.deleted() < asked) {
    out.Add("shortfall", "fewer were available (claimed stocks are never deleted)");
  }
  out.Add("operation id", operation_id);
  std::string text = out.Render();
  if (resp.stock_ids_size() > 0) {
    Table t({"STOCK"});
    for (const std::string& id : resp.stock_ids()) {
      t.AddRow({id});
    }
    absl::StrAppend(&text, "\n", t.Render());
  }
  return text;
}

std::string NodeTable(const google::protobuf::RepeatedPtrField<stockpb::Node>& nodes) {
  Table t({"NODE", "HOSTNAME", "STATUS", "GPUS", "UNHEALTHY", "CPU", "MEMORY", "DISK", "AGENT",
           "HEARTBEAT"});
  for (const auto& n : nodes) {
    t.AddRow({n.node_id(), n.hostname(), NodeStatusName(n.state(), n.cordoned()), GpuSummary(n),
              absl::StrCat(Unhealthy(n)), n.cpu(), n.memory(), n.disk(), n.agent_version(),
              FormatTimestamp(n.heartbeat_time())});
  }
  return t.Render();
}

std::string NodeDetail(const stockpb::Node& n) {
  Fields f;
  f.Add("node", n.node_id());
  f.Add("hostname", n.hostname());
  f.Add("status", NodeStatusName(n.state(), n.cordoned()));
  f.Add("cpu", n.cpu());
  f.Add("memory", n.memory());
  f.Add("disk", n.disk());
  // A protobuf map iterates in no fixed order; sorted, the output is stable.
  std::map<std::string, std::string> labels(n.labels().begin(), n.labels().end());
  f.Add("labels", absl::StrJoin(labels, ",", absl::PairFormatter("=")));
  f.Add("agent", n.agent_version());
  f.Add("heartbeat", FormatTimestamp(n.heartbeat_time()));
  f.Add("created", FormatTimestamp(n.create_time()));
  Table t({"INDEX", "UUID", "MODEL", "MEMORY", "MIG", "HEALTH", "LAST XID", "UTIL", "MEM USED",
           "TEMP", "POWER"});
  int index = 0;
  for (const auto& g : n.gpus()) {
    t.AddRow({absl::StrCat(index++), g.uuid(), g.model(), absl::StrCat(g.memory_mib(), "MiB"),
              g.mig_enabled() ? "yes" : "no", g.healthy() ? "healthy" : "unhealthy",
              g.last_xid() == 0 ? "" : absl::StrCat(g.last_xid()),
              absl::StrFormat("%.0f%%", g.utilization_percent()),
              absl::StrCat(g.memory_used_mib(), "MiB"),
              absl::StrFormat("%.0fC", g.temperature_celsius()),
              absl::StrFormat("%.0fW", g.power_watts())});
  }
  return absl::StrCat(f.Render(), "\n", t.Render());
}

}  // namespace gpuaas::ctl
