#include "services/instance/repository_state_counts.h"

#include <string_view>

namespace gpuaas::instance::repo {

StateCounts CountStates(db::Tx& tx) {
  constexpr std::string_view kCountByState =
      "SELECT state, count(*) FROM instance.instances WHERE delete_time IS NULL GROUP BY state";
  // An instance's latest event into PENDING is when it last started waiting (a create or a start;
  // retries within PENDING write no event: the events trigger writes state changes only).
  constexpr std::string_view kOldestPendingAge =
      "SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(since)), -1)::float8 FROM ("
      " SELECT (SELECT max(e.time) FROM instance.events e"
      "         WHERE e.instance_id = i.instance_id AND e.state = $1) AS since"
      " FROM instance.instances i WHERE i.state = $1 AND i.delete_time IS NULL) p";
  StateCounts out;
  out.by_state.assign(pb::State_ARRAYSIZE, 0);
  for (const db::Row& r : tx.Exec(kCountByState)) {
    const int32_t state = r.Get<int32_t>(0);
    if (state >= 0 && state < pb::State_ARRAYSIZE) out.by_state[state] = r.Get<int64_t>(1);
  }
  const double age =
      tx.Exec(kOldestPendingAge, static_cast<int32_t>(pb::STATE_PENDING)).First()->Get<double>(0);
  out.oldest_pending_age = age < 0 ? absl::ZeroDuration() : absl::Seconds(age);
  return out;
}

}  // namespace gpuaas::instance::repo
