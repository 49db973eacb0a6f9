#include "services/stock/node_state_metrics.h"

#include <utility>
#include <vector>

#include "libs/common/status_macros.h"

namespace gpuaas::stock {
NodeStateMetrics::NodeStateMetrics(db::Pool& pool, Repository& repo, prometheus::Registry& registry)
    : pool_(pool),
      repo_(repo),
      node_ready_(prometheus::BuildGauge()
                      .Name("gpuaas_stock_node_ready")
                      .Help("1 while the node is READY, 0 while NOT_READY (no heartbeat for "
                            "longer than the node timeout)")
                      .Register(registry)),
      nodes_by_state_(prometheus::BuildGauge()
                          .Name("gpuaas_stock_nodes")
                          .Help("Nodes by state (READY, NOT_READY), as the tables hold them")
                          .Register(registry)),
      ready_count_(nodes_by_state_.Add({{"state", "READY"}})),
      not_ready_count_(nodes_by_state_.Add({{"state", "NOT_READY"}})) {}

absl::Status NodeStateMetrics::Refresh() {
  std::vector<std::pair<std::string, bool>> nodes;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("stock.node_state_metrics", [&](db::Tx& tx) {
    nodes = repo_.NodeReadiness(tx);
    return absl::OkStatus();
  }));
  absl::MutexLock lock(&mu_);
  absl::flat_hash_set<std::string> seen;
  int ready = 0;
  for (const auto& [node_id, is_ready] : nodes) {
    node_ready_.Add({{"node", node_id}}).Set(is_ready ? 1 : 0);
    ready += is_ready ? 1 : 0;
    seen.insert(node_id);
  }
  for (const std::string& gone : nodes_) {
    if (!seen.contains(gone)) node_ready_.Remove(&node_ready_.Add({{"node", gone}}));
  }
  nodes_ = std::move(seen);
  ready_count_.Set(ready);
  not_ready_count_.Set(static_cast<double>(nodes.size()) - ready);
  return absl::OkStatus();
}

}  // namespace gpuaas::stock
