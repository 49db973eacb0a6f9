#include "services/instance/instance_state_metrics.h"

#include <string>

#include "absl/strings/match.h"
#include "libs/common/status_macros.h"
#include "services/instance/repository_state_counts.h"

namespace gpuaas::instance {
namespace {

// "STATE_PENDING" -> "PENDING": the label value names the state as the API does, unprefixed.
std::string StateLabel(pb::State state) {
  std::string name = pb::State_Name(state);
  constexpr absl::string_view kPrefix = "STATE_";
  if (absl::StartsWith(name, kPrefix)) name.erase(0, kPrefix.size());
  return name;
}

}  // namespace

InstanceStateMetrics::InstanceStateMetrics(db::Pool& pool, prometheus::Registry& registry)
    : pool_(pool),
      by_state_(pb::State_ARRAYSIZE, nullptr),
      oldest_pending_age_(prometheus::BuildGauge()
                              .Name("gpuaas_instance_oldest_pending_age_seconds")
                              .Help("How long the oldest PENDING instance has been PENDING; 0 "
                                    "when none is")
                              .Register(registry)
                              .Add({})) {
  auto& family = prometheus::BuildGauge()
                     .Name("gpuaas_instance_instances")
                     .Help("Instances not deleted, by state")
                     .Register(registry);
  for (int s = pb::State_MIN; s <= pb::State_MAX; ++s) {
    if (s == pb::STATE_UNSPECIFIED || !pb::State_IsValid(s)) continue;
    by_state_[s] = &family.Add({{"state", StateLabel(static_cast<pb::State>(s))}});
  }
}

absl::Status InstanceStateMetrics::Refresh() {
  repo::StateCounts counts;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("instance.state_metrics", [&](db::Tx& tx) {
    counts = repo::CountStates(tx);
    return absl::OkStatus();
  }));
  absl::MutexLock lock(&mu_);
  for (size_t s = 0; s < by_state_.size(); ++s) {
    if (by_state_[s] != nullptr) by_state_[s]->Set(static_cast<double>(counts.by_state[s]));
  }
  oldest_pending_age_.Set(absl::ToDoubleSeconds(counts.oldest_pending_age));
  return absl::OkStatus();
}

}  // namespace gpuaas::instance
