// The node table: add/remove/update nodes, apply and undo placements, keep the index and each
// node's version stamp current. Knows nothing about policies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libs/sched/internal/model_capacity.h"
#include "libs/sched/internal/node_index.h"
#include "libs/sched/internal/node_state.h"
#include "libs/sched/types.h"

namespace gpuaas::sched::internal {

class Cluster final {
 public:
  absl::Status AddNode(const NodeSpec& spec);
  absl::Status RemoveNode(absl::string_view name);
  absl::Status SetSchedulable(absl::string_view name, bool schedulable);
  absl::Status SetGpuHealth(absl::string_view name, int32_t gpu_index, bool healthy);

  // Slot of a live node, or NOT_FOUND.
  absl::StatusOr<uint32_t> Find(absl::string_view name) const;

  // Takes `p` from its node. Precondition: it fits (checked by the caller's feasibility).
  void Apply(uint32_t slot, const Placement& p);
  // Gives `p` back; FAILED_PRECONDITION (and no change) if that would exceed capacity.
  absl::Status Undo(const Placement& p);
  // Takes `p` (made elsewhere: by another process, or before a restart) from its node and
  // stamps it with the node's incarnation; FAILED_PRECONDITION (and no change) if it does not
  // fit the node's free capacity. Health and schedulability are not checked: a stock stays
  // where it is when its GPU fails.
  absl::StatusOr<Placement> Reserve(Placement p);

  const std::vector<NodeState>& nodes() const { return nodes_; }
  const NodeState& node(uint32_t slot) const { return nodes_[slot]; }
  const NodeIndex& index() const { return index_; }
  const ModelCapacity& capacity() const { return capacity_; }
  const ModelRegistry& models() const { return models_; }
  ModelRegistry& models() { return models_; }
  int32_t live_nodes() const { return static_cast<int32_t>(by_name_.size()); }

 private:
  void Touch(uint32_t slot);
  int32_t GpuPosition(const NodeState& node, int32_t gpu_index) const;

  std::vector<NodeState> nodes_;
  std::vector<uint32_t> free_slots_;
  absl::flat_hash_map<std::string, uint32_t> by_name_;
  ModelRegistry models_;
  NodeIndex index_;
  ModelCapacity capacity_;
  uint64_t next_version_ = 1;
  uint64_t next_incarnation_ = 1;
};

}  // namespace gpuaas::sched::internal
