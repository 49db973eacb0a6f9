#include "services/stock/cluster_view.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace gpuaas::stock {

absl::StatusOr<std::unique_ptr<ClusterView>> ClusterView::Create(sched::SchedulerOptions options) {
  auto scheduler = sched::Scheduler::Create(std::move(options));
  if (!scheduler.ok()) return scheduler.status();
  return std::unique_ptr<ClusterView>(new ClusterView(*std::move(scheduler)));
}

void ClusterView::Count(const sched::Placement& p, int delta) {
  node_holders_[p.node] += delta;
  for (const sched::GpuAssignment& g : p.gpus) gpu_holders_[{p.node, g.index}] += delta;
  if (p.mig) gpu_holders_[{p.node, p.mig->gpu_index}] += delta;
}

void ClusterView::Remove(const std::string& node_id) {
  if (auto it = stocks_by_node_.find(node_id); it != stocks_by_node_.end()) {
    for (const std::string& id : it->second) stocks_.erase(id);
    stocks_by_node_.erase(it);
  }
  node_holders_.erase(node_id);
  absl::erase_if(gpu_holders_, [&](const auto& kv) { return kv.first.first == node_id; });
  generations_.erase(node_id);
  (void)scheduler_->RemoveNode(node_id);  // NOT_FOUND when it was never here: fine
}

absl::Status ClusterView::Put(const NodeRecord& node, const std::vector<StockRecord>& stocks) {
  const std::string& id = node.spec.name;
  Remove(id);
  if (absl::Status s = scheduler_->AddNode(node.spec); !s.ok()) return s;
  generations_[id] = node.generation;
  std::vector<std::string>& on_node = stocks_by_node_[id];
  absl::Status misfit;
  for (const StockRecord& stock : stocks) {
    absl::StatusOr<sched::Placement> held = scheduler_->Reserve(stock.placement);
    if (!held.ok()) {
      // Keep the node out of placement rather than believe it has room it has not.
      (void)scheduler_->SetNodeSchedulable(id, false);
      misfit = absl::FailedPreconditionError(
          absl::StrCat("stock ", stock.stock_id, " does not fit node ", id, " as registered (",
                       held.status().message(), "); the node takes no new stocks"));
      continue;
    }
    stocks_[stock.stock_id] = Held{stock.spec_name, *held};
    on_node.push_back(stock.stock_id);
    Count(*held, +1);
  }
  return misfit;
}

absl::StatusOr<std::vector<sched::Placement>> ClusterView::Place(const sched::Request& request,
                                                                 int32_t count,
                                                                 sched::BatchMode mode) {
  return scheduler_->PlaceBatch(request, count, mode);
}

std::string ClusterView::Explain(const sched::Request& request) const {
  absl::StatusOr<sched::Explanation> why = scheduler_->Explain(request);
  return why.ok() ? why->ToString() : std::string(why.status().message());
}

void ClusterView::Undo(const std::vector<sched::Placement>& placements) {
  for (const sched::Placement& p : placements) (void)scheduler_->Release(p);
}

void ClusterView::Record(const std::string& stock_id, const std::string& spec_name,
                         const sched::Placement& placement) {
  stocks_[stock_id] = Held{spec_name, placement};
  stocks_by_node_[placement.node].push_back(stock_id);
  Count(placement, +1);
}

void ClusterView::Forget(const std::vector<std::string>& stock_ids) {
  for (const std::string& id : stock_ids) {
    auto it = stocks_.find(id);
    if (it == stocks_.end()) continue;
    const sched::Placement& p = it->second.placement;
    (void)scheduler_->Release(p);
    Count(p, -1);
    std::vector<std::string>& on_node = stocks_by_node_[p.node];
    on_node.erase(std::remove(on_node.begin(), on_node.end(), id), on_node.end());
    stocks_.erase(it);
  }
}

std::vector<std::string> ClusterView::DeletionOrder(std::vector<std::string> candidates) const {
  // How many candidates sit on each node and GPU: removing all of them leaves the rest.
  absl::flat_hash_map<std::string, int32_t> node_candidates;
  absl::flat_hash_map<std::pair<std::string, int32_t>, int32_t> gpu_candidates;
  for (const std::string& id : candidates) {
    auto it = stocks_.find(id);
    if (it == stocks_.end()) continue;
    const sched::Placement& p = it->second.placement;
    ++node_candidates[p.node];
    for (const sched::GpuAssignment& g : p.gpus) ++gpu_candidates[{p.node, g.index}];
    if (p.mig) ++gpu_candidates[{p.node, p.mig->gpu_index}];
  }
  constexpr int32_t kUnknown = 1 << 30;
  // (others left on the node, candidates on the node, node, others left on its GPUs, id): a
  // prefix empties the nodes closest to empty one after another, GPU by GPU.
  using Key = std::tuple<int32_t, int32_t, std::string, int32_t, std::string>;
  const auto key = [&](const std::string& id) -> Key {
    auto it = stocks_.find(id);
    if (it == stocks_.end()) return {kUnknown, 0, "", kUnknown, id};
    const sched::Placement& p = it->second.placement;
    const auto holders = [&](int32_t gpu) {
      auto h = gpu_holders_.find({p.node, gpu});
      auto c = gpu_candidates.find({p.node, gpu});
      return (h == gpu_holders_.end() ? 0 : h->second) -
             (c == gpu_candidates.end() ? 0 : c->second);
    };
    int32_t gpu_rest = 0;
    for (const sched::GpuAssignment& g : p.gpus) gpu_rest = std::max(gpu_rest, holders(g.index));
    if (p.mig) gpu_rest = std::max(gpu_rest, holders(p.mig->gpu_index));
    auto n = node_holders_.find(p.node);
    const int32_t node_rest =
        (n == node_holders_.end() ? 0 : n->second) - node_candidates.at(p.node);
    return {node_rest, node_candidates.at(p.node), p.node, gpu_rest, id};
  };
  std::vector<std::pair<Key, std::string>> keyed;
  keyed.reserve(candidates.size());
  for (std::string& id : candidates) keyed.emplace_back(key(id), std::move(id));
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::string> out;
  out.reserve(keyed.size());
  for (auto& [k, id] : keyed) out.push_back(std::move(id));
  return out;
}

absl::StatusOr<sched::NodeUsage> ClusterView::Usage(const std::string& node_id) const {
  return scheduler_->GetNodeUsage(node_id);
}

}  // namespace gpuaas::stock
