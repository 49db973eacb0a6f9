// Placement policies behind one interface. The Scheduler filters nodes (feasibility is never
// a policy's business) and asks the policy to score each feasible node; the lowest score wins.
// Policies are created by name with MakePolicy().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libs/sched/internal/compiled_request.h"
#include "libs/sched/internal/model_capacity.h"
#include "libs/sched/internal/node_state.h"
#include "libs/sched/workload.h"

namespace gpuaas::sched {

// A policy's verdict on one feasible node.
struct NodeScore {
  double score = 0;        // lower is better
  int32_t share_gpu = -1;  // for a fractional request: the GPU position to use (-1 = best fit)
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual absl::string_view Name() const = 0;
  // Sees every request once, before it is placed (online workload learning).
  virtual void Observe(const internal::CompiledRequest& req) {}
  virtual NodeScore Score(uint32_t slot, const internal::NodeState& node,
                          const internal::CompiledRequest& req) = 0;
  // True when equal scores are broken uniformly at random (seeded), else by lowest node slot.
  virtual bool RandomTies() const { return false; }
  // "oracle" (workload given), "online" (learned from requests seen) or "none".
  virtual absl::string_view WorkloadMode() const { return "none"; }
};
using PolicyPtr = std::unique_ptr<Policy>;

struct PolicyOptions {
  uint64_t seed = 1;
  // For workload-aware policies: the target workload. Unset = learn it online.
  std::optional<Workload> workload;
  // Model ids of the cluster the policy serves; owned by the Scheduler, outlives the policy.
  const internal::ModelRegistry* models = nullptr;
  // Free GPU share per model, kept current by the Scheduler; outlives the policy.
  const internal::ModelCapacity* capacity = nullptr;
};

// Names: random, first-fit, best-fit, spread, dot-product, gpu-packing, fgd, fgd-exact and
// our own fgd-pack (see policies/fgd_policy.h); "fgd:key=value:..." builds an FGD variant for
// experiments. INVALID_ARGUMENT for unknown names or options.
absl::StatusOr<PolicyPtr> MakePolicy(absl::string_view name, const PolicyOptions& options);
std::vector<std::string> PolicyNames();

}  // namespace gpuaas::sched
