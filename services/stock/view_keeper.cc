#include "services/stock/view_keeper.h"

#include "libs/common/logging.h"

namespace gpuaas::stock {

absl::Status ViewKeeper::PutFromTablesLocked(const std::optional<std::string>& node_id) {
  std::vector<NodeRecord> nodes;
  std::vector<StockRecord> stocks;
  absl::Status s = pool_.RunInTransaction("stock.load_nodes", [&](db::Tx& tx) {
    // One snapshot for nodes and stocks, so each generation matches what is read with it.
    tx.ExecScript("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    Repository::PlanForParameters(tx);
    nodes = repo_.LoadNodeRecords(tx, node_id);
    stocks = repo_.LoadStockRecords(tx, node_id);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  if (node_id && nodes.empty()) view_->Remove(*node_id);
  absl::flat_hash_map<std::string, std::vector<StockRecord>> by_node;
  for (StockRecord& stock : stocks) by_node[stock.placement.node].push_back(std::move(stock));
  for (const NodeRecord& node : nodes) {
    if (absl::Status put = view_->Put(node, by_node[node.spec.name]); !put.ok()) {
      Logger("stock")->error("{}", put.ToString());
    }
  }
  return absl::OkStatus();
}

absl::Status ViewKeeper::Load() {
  absl::MutexLock lock(&mu_);
  return PutFromTablesLocked(std::nullopt);
}

absl::Status ViewKeeper::SyncLocked() {
  absl::flat_hash_map<std::string, int64_t> stored;
  absl::Status s = pool_.RunInTransaction("stock.node_generations", [&](db::Tx& tx) {
    stored = repo_.NodeGenerations(tx);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  std::vector<std::string> changed;
  for (const auto& [node, generation] : stored) {
    auto it = view_->generations().find(node);
    if (it == view_->generations().end() || it->second != generation) changed.push_back(node);
  }
  std::vector<std::string> gone;
  for (const auto& [node, generation] : view_->generations()) {
    if (!stored.contains(node)) gone.push_back(node);
  }
  for (const std::string& node : gone) view_->Remove(node);
  return ReloadLocked(changed);
}

absl::Status ViewKeeper::ReloadLocked(const std::vector<std::string>& node_ids) {
  for (const std::string& id : node_ids) {
    if (absl::Status s = PutFromTablesLocked(id); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ViewKeeper::Reload(const std::vector<std::string>& node_ids) {
  absl::MutexLock lock(&mu_);
  return ReloadLocked(node_ids);
}

}  // namespace gpuaas::stock
