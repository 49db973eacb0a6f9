#include "libs/sched/internal/cluster.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace gpuaas::sched::internal {

absl::Status Cluster::AddNode(const NodeSpec& spec) {
  if (spec.name.empty()) {
    return absl::InvalidArgumentError("node name is empty");
  }
  if (spec.cpu_milli < 0 || spec.memory_bytes < 0 || spec.disk_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat("node ", spec.name, ": negative capacity"));
  }
  if (by_name_.contains(spec.name)) {
    return absl::AlreadyExistsError(absl::StrCat("node ", spec.name, " already exists"));
  }
  absl::flat_hash_set<int32_t> indexes;
  for (const GpuSpec& g : spec.gpus) {
    if (!indexes.insert(g.index).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", spec.name, ": duplicate GPU index ", g.index));
    }
    if (g.mig_enabled && FindMigGeometry(g.model) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", spec.name, ": GPU model ", g.model, " has no MIG"));
    }
  }
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  NodeState& n = nodes_[slot];
  n = NodeState{};
  n.live = true;
  n.name = spec.name;
  n.incarnation = next_incarnation_++;
  n.cpu_cap = n.cpu_free = spec.cpu_milli;
  n.mem_cap = n.mem_free = spec.memory_bytes;
  n.disk_cap = n.disk_free = spec.disk_bytes;
  n.schedulable = spec.schedulable;
  n.labels = spec.labels;
  for (const GpuSpec& g : spec.gpus) {
    GpuState s;
    s.index = g.index;
    s.model = models_.Intern(g.model);
    s.healthy = g.healthy;
    s.memory_bytes = g.memory_bytes;
    if (g.mig_enabled) {
      s.mig = true;
      s.mig_geometry = FindMigGeometry(g.model);
      s.mig_free = FullMigMask(*s.mig_geometry);
    } else {
      s.free_milli = 1000;
    }
    if (n.gpus.empty()) {
      n.model_key = s.model;
    } else if (n.model_key != s.model) {
      n.model_key = kMixedModel;
    }
    n.gpus.push_back(s);
  }
  by_name_.emplace(spec.name, slot);
  Touch(slot);
  return absl::OkStatus();
}

absl::Status Cluster::RemoveNode(absl::string_view name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
  }
  const uint32_t slot = it->second;
  by_name_.erase(it);
  nodes_[slot].live = false;
  index_.Erase(nodes_, slot);
  capacity_.Recount(nodes_[slot]);
  nodes_[slot].version = next_version_++;
  free_slots_.push_back(slot);
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> Cluster::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
  }
  return it->second;
}

absl::Status Cluster::SetSchedulable(absl::string_view name, bool schedulable) {
  auto slot = Find(name);
  if (!slot.ok()) {
    return slot.status();
  }
  nodes_[*slot].schedulable = schedulable;
  Touch(*slot);
  return absl::OkStatus();
}

int32_t Cluster::GpuPosition(const NodeState& node, int32_t gpu_index) const {
  for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()); ++i) {
    if (node.gpus[i].index == gpu_index) {
      return i;
    }
  }
  return -1;
}

absl::Status Cluster::SetGpuHealth(absl::string_view name, int32_t gpu_index, bool healthy) {
  auto slot = Find(name);
  if (!slot.ok()) {
    return slot.status();
  }
  NodeState& n = nodes_[*slot];
  const int32_t pos = GpuPosition(n, gpu_index);
  if (pos < 0) {
    return absl::NotFoundError(absl::StrCat("node ", name, " has no GPU ", gpu_index));
  }
  n.gpus[pos].healthy = healthy;
  Touch(*slot);
  return absl::OkStatus();
}

void Cluster::Apply(uint32_t slot, const Placement& p) {
  NodeState& n = nodes_[slot];
  n.cpu_free -= p.cpu_milli;
  n.mem_free -= p.memory_bytes;
  n.disk_free -= p.disk_bytes;
  for (const GpuAssignment& a : p.gpus) {
    n.gpus[GpuPosition(n, a.index)].free_milli -= a.milli;
  }
  if (p.mig) {
    n.gpus[GpuPosition(n, p.mig->gpu_index)].mig_free &=
        static_cast<uint8_t>(~MigSliceMask(p.mig->start_slice, p.mig->slices));
  }
  ++n.placements;
  Touch(slot);
}

absl::Status Cluster::Undo(const Placement& p) {
  auto found = Find(p.node);
  if (!found.ok()) {
    return found.status();
  }
  NodeState& n = nodes_[*found];
  if (n.incarnation != p.node_incarnation) {
    return absl::NotFoundError(absl::StrCat("node ", p.node, " was replaced since placement"));
  }
  const auto bad = [&](absl::string_view what) {
    return absl::FailedPreconditionError(
        absl::StrCat("release on ", p.node, " would exceed ", what, " capacity (released twice?)"));
  };
  if (n.placements <= 0) return bad("placement count");
  if (n.cpu_free + p.cpu_milli > n.cpu_cap) return bad("CPU");
  if (n.mem_free + p.memory_bytes > n.mem_cap) return bad("memory");
  if (n.disk_free + p.disk_bytes > n.disk_cap) return bad("disk");
  for (const GpuAssignment& a : p.gpus) {
    const int32_t pos = GpuPosition(n, a.index);
    if (pos < 0 || n.gpus[pos].mig || n.gpus[pos].free_milli + a.milli > kWholeGpuMilli) {
      return bad("GPU share");
    }
  }
  if (p.mig) {
    const int32_t pos = GpuPosition(n, p.mig->gpu_index);
    const uint8_t mask = MigSliceMask(p.mig->start_slice, p.mig->slices);
    if (pos < 0 || !n.gpus[pos].mig || (n.gpus[pos].mig_free & mask) != 0) {
      return bad("MIG slice");
    }
  }
  n.cpu_free += p.cpu_milli;
  n.mem_free += p.memory_bytes;
  n.disk_free += p.disk_bytes;
  for (const GpuAssignment& a : p.gpus) {
    n.gpus[GpuPosition(n, a.index)].free_milli += a.milli;
  }
  if (p.mig) {
    n.gpus[GpuPosition(n, p.mig->gpu_index)].mig_free |=
        MigSliceMask(p.mig->start_slice, p.mig->slices);
  }
  --n.placements;
  Touch(*found);
  return absl::OkStatus();
}

absl::StatusOr<Placement> Cluster::Reserve(Placement p) {
  auto found = Find(p.node);
  if (!found.ok()) {
    return found.status();
  }
  const NodeState& n = nodes_[*found];
  const auto bad = [&](absl::string_view what) {
    return absl::FailedPreconditionError(
        absl::StrCat("placement on ", p.node, " exceeds its free ", what));
  };
  if (p.cpu_milli < 0 || p.memory_bytes < 0 || p.disk_bytes < 0) return bad("capacity (negative)");
  if (p.cpu_milli > n.cpu_free) return bad("CPU");
  if (p.memory_bytes > n.mem_free) return bad("memory");
  if (p.disk_bytes > n.disk_free) return bad("disk");
  absl::flat_hash_map<int32_t, int32_t> milli_by_gpu;
  for (const GpuAssignment& a : p.gpus) {
    const int32_t pos = GpuPosition(n, a.index);
    if (pos < 0 || n.gpus[pos].mig || a.milli <= 0 ||
        (milli_by_gpu[a.index] += a.milli) > n.gpus[pos].free_milli) {
      return bad("GPU share");
    }
  }
  if (p.mig) {
    const int32_t pos = GpuPosition(n, p.mig->gpu_index);
    const uint8_t mask = MigSliceMask(p.mig->start_slice, p.mig->slices);
    if (pos < 0 || !n.gpus[pos].mig || p.mig->slices <= 0 ||
        (n.gpus[pos].mig_free & mask) != mask) {
      return bad("MIG slices");
    }
  }
  p.node_incarnation = n.incarnation;
  Apply(*found, p);
  return p;
}

void Cluster::Touch(uint32_t slot) {
  NodeState& n = nodes_[slot];
  n.version = next_version_++;
  n.Refresh();
  capacity_.Recount(n);
  index_.Update(nodes_, slot);
}

}  // namespace gpuaas::sched::internal
