// Keeps the ClusterView in step with the tables: loads it at start, re-reads the nodes whose
// generation in the tables differs from the view's (changed by this replica's node writes or by
// another replica), and holds the mutex every placement runs under. One per process.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "libs/db/db.h"
#include "services/stock/cluster_view.h"
#include "services/stock/repository.h"

namespace gpuaas::stock {

class ViewKeeper final {
 public:
  ViewKeeper(db::Pool& pool, Repository& repo, std::unique_ptr<ClusterView> view)
      : pool_(pool), repo_(repo), view_(std::move(view)) {}

  // Placement runs with mu() held: a replica's own writes never race each other, and a guard
  // fails only when another replica changed the node.
  absl::Mutex& mu() ABSL_LOCK_RETURNED(mu_) { return mu_; }
  ClusterView& view() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return *view_; }

  // Reads every node and stock in one snapshot. At start; blocks on PostgreSQL.
  absl::Status Load() ABSL_LOCKS_EXCLUDED(mu_);
  // Re-reads every node whose generation differs from the view's, and drops vanished ones.
  // Blocks on PostgreSQL. Errors: UNAVAILABLE.
  absl::Status SyncLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Re-reads the given nodes (after a write to them, or a failed guard).
  absl::Status ReloadLocked(const std::vector<std::string>& node_ids)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The same, taking the mutex.
  absl::Status Reload(const std::vector<std::string>& node_ids) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Reads one node (or every node) and its stocks in one snapshot and puts them in the view;
  // a node gone from the tables leaves the view.
  absl::Status PutFromTablesLocked(const std::optional<std::string>& node_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  db::Pool& pool_;
  Repository& repo_;
  absl::Mutex mu_;
  std::unique_ptr<ClusterView> view_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::stock
