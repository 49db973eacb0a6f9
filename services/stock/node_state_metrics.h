// The nodes' readiness as Prometheus series, so that an operator's alert sees a node that died
// (tools/monitoring/rules.yml, GpuaasNodeNotReady):
//
//   gpuaas_stock_node_ready{node}   gauge, 1 while the node is READY, 0 while NOT_READY
//   gpuaas_stock_nodes{state}       gauge, how many nodes are READY and NOT_READY (0 included)
//
// Read from the tables, not from this replica's ClusterView: another replica may have marked
// the node NOT_READY, and the view learns that only at its next placement. Every replica
// serves the same numbers; the rules take the max over replicas.
#pragma once

#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "libs/db/db.h"
#include "services/stock/repository.h"

namespace gpuaas::stock {

class NodeStateMetrics final {
 public:
  // Adds both families to `registry`; `pool`, `repo` and `registry` outlive this object.
  NodeStateMetrics(db::Pool& pool, Repository& repo, prometheus::Registry& registry);

  // Reads every node's readiness in one short transaction and sets the gauges; a node gone
  // from the table loses its series. Thread-safe. Blocks on PostgreSQL. Errors: the database's
  // (the gauges keep their last values).
  absl::Status Refresh() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  db::Pool& pool_;
  Repository& repo_;
  prometheus::Family<prometheus::Gauge>& node_ready_;
  prometheus::Family<prometheus::Gauge>& nodes_by_state_;
  prometheus::Gauge& ready_count_;
  prometheus::Gauge& not_ready_count_;
  absl::Mutex mu_;
  // The nodes that have a series in node_ready_.
  absl::flat_hash_set<std::string> nodes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::stock
