// gpuaas placement engine: decides on which node, and on which GPUs of it, a request runs.
//
// Overview. A Scheduler holds a set of nodes (CPU, memory, disk, labels, GPUs with free
// shares or MIG slices) and one placement policy chosen by name (see policy.h). Place() finds
// the best feasible node for a request and takes its resources; Release() gives a placement's
// resources back exactly; PlaceBatch() places N copies (bulk stock creation); Explain() says
// how many nodes each constraint ruled out. Nodes can be added, removed and updated (health,
// schedulable) at any time; placements on a removed node are simply forgotten.
//
// Feasibility (the same for every policy): a whole GPU only on an untouched GPU; a share
// (gpu_count 1, gpu_milli < 1000) only on a GPU whose free share fits it; a multi-GPU request
// only on whole free GPUs of one node; a MIG profile only on a MIG-enabled GPU of a supported
// model at a legal free start slice (mig.h); never beyond CPU, memory or disk; nothing on
// unhealthy GPUs or unschedulable nodes; GPU models and node labels as the request restricts.
//
// Determinism and threads: pure computation, no I/O, no threads. Given the same seed and the
// same sequence of calls, results are identical. Not thread-safe: callers serialise access
// (the stock service holds one Scheduler per process behind a mutex). Nothing blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libs/sched/internal/cluster.h"
#include "libs/sched/policy.h"
#include "libs/sched/types.h"
#include "libs/sched/workload.h"

namespace gpuaas::sched {

struct SchedulerOptions {
  std::string policy = "best-fit";  // any of PolicyNames()
  uint64_t seed = 1;                // random tie-breaks and the random policy
  // Target workload for FGD-family policies; unset = learned online from requests seen.
  std::optional<Workload> workload;
  // Place() failures carry Explain()'s summary; that costs a scan of every node, which trace
  // replays turn off.
  bool explain_failures = true;
};

// Why a request does not fit: for each constraint, how many nodes it ruled out first.
struct Explanation {
  int32_t nodes = 0;
  int32_t feasible = 0;
  int32_t unschedulable = 0;
  int32_t selector = 0;
  int32_t gpu_model = 0;
  int32_t cpu = 0;
  int32_t memory = 0;
  int32_t disk = 0;
  int32_t gpu_count = 0;
  int32_t gpu_share = 0;
  int32_t mig = 0;
  std::string ToString() const;  // e.g. "0/12 nodes fit: 4 cpu, 8 gpu_count"
};

enum class BatchMode { kAllOrNothing, kAsManyAsFit };

class Scheduler final {
 public:
  // INVALID_ARGUMENT for an unknown policy.
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(SchedulerOptions options);

  // INVALID_ARGUMENT for an empty name, negative capacity, duplicate GPU index or MIG on a
  // model without MIG; ALREADY_EXISTS if the name is taken.
  absl::Status AddNode(const NodeSpec& spec);
  // NOT_FOUND if absent. Placements on the node are dropped with it.
  absl::Status RemoveNode(absl::string_view name);
  // NOT_FOUND if absent. Existing placements stay; new ones avoid the node.
  absl::Status SetNodeSchedulable(absl::string_view name, bool schedulable);
  // NOT_FOUND if the node or GPU index is absent. An unhealthy GPU takes no new placements.
  absl::Status SetGpuHealth(absl::string_view name, int32_t gpu_index, bool healthy);

  // Places one request. INVALID_ARGUMENT for a malformed request (negative amounts, share with
  // gpu_count != 1, unknown MIG profile with gpu_count != 1); RESOURCE_EXHAUSTED with the
  // Explain() summary when no node fits.
  absl::StatusOr<Placement> Place(const Request& request);

  // Places `count` copies. kAllOrNothing: either all are placed or none (RESOURCE_EXHAUSTED);
  // kAsManyAsFit: returns the ones that fit (possibly none, still OK).
  absl::StatusOr<std::vector<Placement>> PlaceBatch(const Request& request, int32_t count,
                                                    BatchMode mode);

  // Gives back exactly what `placement` took. NOT_FOUND if its node was removed or replaced;
  // FAILED_PRECONDITION (nothing changed) if it would exceed capacity, e.g. a double release.
  absl::Status Release(const Placement& placement);

  // Takes exactly `placement`, made before (by another process, or before a restart), from
  // its node, and returns it stamped for Release(). NOT_FOUND without the node;
  // FAILED_PRECONDITION (nothing changed) when it does not fit the node's free capacity.
  absl::StatusOr<Placement> Reserve(const Placement& placement);

  // Counts, per constraint, the nodes that rule the request out. INVALID_ARGUMENT as Place().
  absl::StatusOr<Explanation> Explain(const Request& request) const;

  // NOT_FOUND if absent.
  absl::StatusOr<NodeUsage> GetNodeUsage(absl::string_view name) const;
  std::vector<std::string> NodeNames() const;
  const Policy& policy() const { return *policy_; }

 private:
  explicit Scheduler(SchedulerOptions options)
      : options_(std::move(options)), rng_(options_.seed) {}
  absl::StatusOr<internal::CompiledRequest> Compile(const Request& request) const;
  // The chosen node slot and placement, or nullopt when nothing fits.
  std::optional<Placement> Decide(const internal::CompiledRequest& req);

  SchedulerOptions options_;
  internal::Cluster cluster_;
  PolicyPtr policy_;
  std::mt19937_64 rng_;
};

}  // namespace gpuaas::sched
