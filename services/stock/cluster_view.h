// The stock service's in-memory picture of the cluster: libs/sched's Scheduler with every node
// and every stock's placement, plus the generation of each node as last read from the tables.
// The domain places from it without a database round trip, then writes the result guarded by
// those generations; when a guard fails (another replica changed the node), it re-reads the
// node (Put) and places again.
//
// Pure: no I/O, no locks. Not thread-safe: the owner serialises every call (StockPool holds
// its placement mutex around each use).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "libs/sched/scheduler.h"

namespace gpuaas::stock {

// What placement needs of a node, as stored.
struct NodeRecord {
  int64_t generation = 0;
  // name = node_id; schedulable = ready and not cordoned; a GPU is healthy when it is healthy
  // and still reported by its agent.
  sched::NodeSpec spec;
};

// A stock as placement sees it.
struct StockRecord {
  std::string stock_id;
  std::string spec_name;
  sched::Placement placement;  // node = node_id
};

class ClusterView final {
 public:
  // INVALID_ARGUMENT for an unknown policy.
  static absl::StatusOr<std::unique_ptr<ClusterView>> Create(sched::SchedulerOptions options);

  // Replaces `node` and every stock on it with what the tables say. A stock that does not fit
  // (the node shrank under it) is kept out of placement with the whole node, which becomes
  // unschedulable here until the next Put; the error names it, for the log.
  absl::Status Put(const NodeRecord& node, const std::vector<StockRecord>& stocks);
  // Forgets a node and its stocks (it is gone from the tables).
  void Remove(const std::string& node_id);

  // Generation of each node as last read or written; absent nodes are unknown here.
  const absl::flat_hash_map<std::string, int64_t>& generations() const { return generations_; }
  // After a committed write guarded at `generation`: the node is now at generation + 1.
  void Advance(const std::string& node_id) { ++generations_[node_id]; }

  // Places `count` copies of `request` (kept here until Forget or Record); see
  // Scheduler::PlaceBatch. The caller records the ones it commits and undoes the rest.
  absl::StatusOr<std::vector<sched::Placement>> Place(const sched::Request& request, int32_t count,
                                                      sched::BatchMode mode);
  // Why `request` fits nowhere, in the engine's words ("0/3 nodes fit: 2 gpu_model, 1 cpu").
  std::string Explain(const sched::Request& request) const;
  // Gives placements made by Place back (their write did not commit).
  void Undo(const std::vector<sched::Placement>& placements);

  // Remembers a committed stock's placement, so deleting it frees exactly that.
  void Record(const std::string& stock_id, const std::string& spec_name,
              const sched::Placement& placement);
  // Frees committed stocks (deleted). Unknown ids are ignored.
  void Forget(const std::vector<std::string>& stock_ids);

  // `candidates` ordered so that deleting a prefix frees whole GPUs and whole nodes first: stocks
  // on the nodes that keep the fewest other stocks come first, and within a node those whose
  // GPUs have the fewest other holders. Unknown ids go last. Ties: by stock id.
  std::vector<std::string> DeletionOrder(std::vector<std::string> candidates) const;

  // Free capacity, for tests and dashboards. NOT_FOUND for an unknown node.
  absl::StatusOr<sched::NodeUsage> Usage(const std::string& node_id) const;
  int64_t stock_count() const { return static_cast<int64_t>(stocks_.size()); }

 private:
  struct Held {
    std::string spec_name;
    sched::Placement placement;
  };
  explicit ClusterView(std::unique_ptr<sched::Scheduler> scheduler)
      : scheduler_(std::move(scheduler)) {}
  void Count(const sched::Placement& p, int delta);

  std::unique_ptr<sched::Scheduler> scheduler_;
  absl::flat_hash_map<std::string, int64_t> generations_;
  absl::flat_hash_map<std::string, Held> stocks_;  // by stock_id
  absl::flat_hash_map<std::string, std::vector<std::string>> stocks_by_node_;
  // Holders per node and per (node, GPU index), for DeletionOrder.
  absl::flat_hash_map<std::string, int32_t> node_holders_;
  absl::flat_hash_map<std::pair<std::string, int32_t>, int32_t> gpu_holders_;
};

}  // namespace gpuaas::stock
