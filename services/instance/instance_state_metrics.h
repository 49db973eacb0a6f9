// The instances' states as Prometheus series, for the operator's alert on a queue of instances
// that do not start (tools/monitoring/rules.yml, GpuaasInstancesPendingTooLong):
//
//   gpuaas_instance_instances{state}                gauge, live instances by state (PENDING,
//                                                   READY, RUNNING, STOPPING, STOPPED, FAILED,
//                                                   DELETING; 0 included)
//   gpuaas_instance_oldest_pending_age_seconds      gauge, how long the oldest PENDING instance
//                                                   has been PENDING; 0 when none is
//
// Read from the tables at each Refresh (every replica serves the same numbers; the rules take
// the max over replicas). The age is the database's now() minus the instance's last move into
// PENDING, so it is as old as the last Refresh, not the scrape.
#pragma once

#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "libs/db/db.h"

namespace gpuaas::instance {

class InstanceStateMetrics final {
 public:
  // Adds both families to `registry`; `pool` and `registry` outlive this object.
  InstanceStateMetrics(db::Pool& pool, prometheus::Registry& registry);

  // Reads the counts in one short transaction and sets the gauges. Thread-safe. Blocks on
  // PostgreSQL. Errors: the database's (the gauges keep their last values).
  absl::Status Refresh();

 private:
  db::Pool& pool_;
  // By State number; null for STATE_UNSPECIFIED.
  std::vector<prometheus::Gauge*> by_state_;
  prometheus::Gauge& oldest_pending_age_;
  absl::Mutex mu_;  // one Refresh at a time sets the gauges
};

}  // namespace gpuaas::instance
