// The SQL behind the instances' state series (instance_state_metrics.h): how many instances are
// in each state, and how long the oldest PENDING one has been waiting.
#pragma once

#include <vector>

#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/db/db.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

namespace repo {

struct StateCounts {
  // Instances not deleted, by state (State numbers; an index past the array's end is ignored).
  std::vector<int64_t> by_state;
  // Since when the oldest PENDING instance has been PENDING (its last move into PENDING, from
  // instance.events); zero when none is.
  absl::Duration oldest_pending_age;
};

// One snapshot. Reads every live instance's state (a count per state, on the primary key's scan)
// and the PENDING ones' events.
StateCounts CountStates(db::Tx& tx);

}  // namespace repo
}  // namespace gpuaas::instance
