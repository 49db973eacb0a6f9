#include "libs/sched/scheduler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/common/status_macros.h"
#include "libs/sched/internal/feasibility.h"

namespace gpuaas::sched {

using internal::CompiledRequest;
using internal::NodeState;
using internal::Reject;

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(SchedulerOptions options) {
  std::unique_ptr<Scheduler> s(new Scheduler(std::move(options)));
  PolicyOptions po;
  po.seed = s->options_.seed;
  po.workload = s->options_.workload;
  po.models = &s->cluster_.models();
  po.capacity = &s->cluster_.capacity();
  GPUAAS_ASSIGN_OR_RETURN(s->policy_, MakePolicy(s->options_.policy, po));
  return s;
}

absl::Status Scheduler::AddNode(const NodeSpec& spec) { return cluster_.AddNode(spec); }
absl::Status Scheduler::RemoveNode(absl::string_view name) { return cluster_.RemoveNode(name); }
absl::Status Scheduler::SetNodeSchedulable(absl::string_view name, bool schedulable) {
  return cluster_.SetSchedulable(name, schedulable);
}
absl::Status Scheduler::SetGpuHealth(absl::string_view name, int32_t gpu_index, bool healthy) {
  return cluster_.SetGpuHealth(name, gpu_index, healthy);
}

absl::StatusOr<CompiledRequest> Scheduler::Compile(const Request& request) const {
  if (request.cpu_milli < 0 || request.memory_bytes < 0 || request.disk_bytes < 0 ||
      request.gpu_count < 0) {
    return absl::InvalidArgumentError("request: negative amount");
  }
  CompiledRequest c;
  c.request = &request;
  c.gpu_count = request.gpu_count;
  if (!request.mig_profile.empty()) {
    if (request.gpu_count != 1) {
      return absl::InvalidArgumentError("request.gpu_count must be 1 with a mig_profile");
    }
    c.mig = true;
  } else if (request.gpu_count > 0) {
    if (request.gpu_milli <= 0 || request.gpu_milli > kWholeGpuMilli) {
      return absl::InvalidArgumentError("request.gpu_milli must be in 1..1000");
    }
    if (request.gpu_milli < kWholeGpuMilli && request.gpu_count != 1) {
      return absl::InvalidArgumentError("request.gpu_milli < 1000 needs gpu_count == 1");
    }
    c.gpu_milli = request.gpu_milli;
    c.share = request.gpu_milli < kWholeGpuMilli;
  }
  c.any_model = request.gpu_models.empty();
  if (!c.any_model) {
    c.allowed.assign(cluster_.models().size(), false);
    for (const std::string& m : request.gpu_models) {
      const int16_t id = cluster_.models().Find(m);
      if (id >= 0) {
        c.allowed[id] = true;
      }
    }
  }
  return c;
}

std::optional<Placement> Scheduler::Decide(const CompiledRequest& req) {
  policy_->Observe(req);
  const bool random_ties = policy_->RandomTies();
  int64_t best_slot = -1;
  NodeScore best;
  int64_t ties = 0;
  cluster_.index().ForEachCandidate(req, [&](uint32_t slot) {
    const NodeState& node = cluster_.node(slot);
    if (internal::CheckNode(node, req) != Reject::kNone) {
      return;
    }
    const NodeScore s = policy_->Score(slot, node, req);
    if (best_slot < 0 || s.score < best.score) {
      best_slot = slot;
      best = s;
      ties = 1;
    } else if (s.score == best.score) {
      if (random_ties) {
        // Reservoir sampling: each of the tied nodes wins with equal probability.
        if (std::uniform_int_distribution<int64_t>(0, ties++)(rng_) == 0) {
          best_slot = slot;
          best = s;
        }
      } else if (slot < best_slot) {
        best_slot = slot;
        best = s;
      }
    }
  });
  if (best_slot < 0) {
    return std::nullopt;
  }
  const auto slot = static_cast<uint32_t>(best_slot);
  const NodeState& node = cluster_.node(slot);
  const Request& r = *req.request;
  Placement p;
  p.node = node.name;
  p.node_incarnation = node.incarnation;
  p.cpu_milli = r.cpu_milli;
  p.memory_bytes = r.memory_bytes;
  p.disk_bytes = r.disk_bytes;
  if (req.mig) {
    const internal::MigChoice m = internal::ChooseMig(node, req);
    p.mig = MigAssignment{node.gpus[m.gpu].index, r.mig_profile, m.start, m.slices};
  } else if (req.share) {
    const int32_t pos =
        best.share_gpu >= 0 ? best.share_gpu : internal::ChooseBestFitShareGpu(node, req);
    p.gpus.push_back({node.gpus[pos].index, req.gpu_milli});
  } else if (req.gpu_count > 0) {
    for (int32_t pos : internal::ChooseWholeGpus(node, req)) {
      p.gpus.push_back({node.gpus[pos].index, kWholeGpuMilli});
    }
  }
  cluster_.Apply(slot, p);
  return p;
}

absl::StatusOr<Placement> Scheduler::Place(const Request& request) {
  GPUAAS_ASSIGN_OR_RETURN(const CompiledRequest req, Compile(request));
  std::optional<Placement> p = Decide(req);
  if (!p) {
    if (!options_.explain_failures) {
      return absl::ResourceExhaustedError("no node fits");
    }
    GPUAAS_ASSIGN_OR_RETURN(const Explanation why, Explain(request));
    return absl::ResourceExhaustedError(why.ToString());
  }
  return *std::move(p);
}

absl::StatusOr<std::vector<Placement>> Scheduler::PlaceBatch(const Request& request, int32_t count,
                                                             BatchMode mode) {
  if (count < 0) {
    return absl::InvalidArgumentError("count must not be negative");
  }
  GPUAAS_ASSIGN_OR_RETURN(const CompiledRequest req, Compile(request));
  std::vector<Placement> out;
  out.reserve(count);
  for (int32_t i = 0; i < count; ++i) {
    std::optional<Placement> p = Decide(req);
    if (!p) {
      break;
    }
    out.push_back(*std::move(p));
  }
  if (mode == BatchMode::kAllOrNothing && static_cast<int32_t>(out.size()) < count) {
    const size_t placed = out.size();
    for (auto it = out.rbegin(); it != out.rend(); ++it) {
      GPUAAS_RETURN_IF_ERROR(cluster_.Undo(*it));
    }
    GPUAAS_ASSIGN_OR_RETURN(const Explanation why, Explain(request));
    return absl::ResourceExhaustedError(
        absl::StrCat("only ", placed, " of ", count, " fit; next: ", why.ToString()));
  }
  return out;
}

absl::Status Scheduler::Release(const Placement& placement) { return cluster_.Undo(placement); }

absl::StatusOr<Placement> Scheduler::Reserve(const Placement& placement) {
  return cluster_.Reserve(placement);
}

absl::StatusOr<Explanation> Scheduler::Explain(const Request& request) const {
  GPUAAS_ASSIGN_OR_RETURN(const CompiledRequest req, Compile(request));
  Explanation e;
  for (const NodeState& node : cluster_.nodes()) {
    if (!node.live) {
      continue;
    }
    ++e.nodes;
    switch (internal::CheckNode(node, req)) {
      case Reject::kNone:
        ++e.feasible;
        break;
      case Reject::kUnschedulable:
        ++e.unschedulable;
        break;
      case Reject::kSelector:
        ++e.selector;
        break;
      case Reject::kGpuModel:
        ++e.gpu_model;
        break;
      case Reject::kCpu:
        ++e.cpu;
        break;
      case Reject::kMemory:
        ++e.memory;
        break;
      case Reject::kDisk:
        ++e.disk;
        break;
      case Reject::kGpuCount:
        ++e.gpu_count;
        break;
      case Reject::kGpuShare:
        ++e.gpu_share;
        break;
      case Reject::kMig:
        ++e.mig;
        break;
    }
  }
  return e;
}

std::string Explanation::ToString() const {
  std::vector<std::string> parts;
  const std::pair<const char*, int32_t> counts[] = {{"unschedulable", unschedulable},
                                                    {"selector", selector},
                                                    {"gpu_model", gpu_model},
                                                    {"cpu", cpu},
                                                    {"memory", memory},
                                                    {"disk", disk},
                                                    {"gpu_count", gpu_count},
                                                    {"gpu_share", gpu_share},
                                                    {"mig", mig}};
  for (const auto& [name, n] : counts) {
    if (n > 0) {
      parts.push_back(absl::StrCat(n, " ", name));
    }
  }
  return absl::StrCat(feasible, "/", nodes, " nodes fit", parts.empty() ? "" : ": ",
                      absl::StrJoin(parts, ", "));
}

absl::StatusOr<NodeUsage> Scheduler::GetNodeUsage(absl::string_view name) const {
  GPUAAS_ASSIGN_OR_RETURN(const uint32_t slot, cluster_.Find(name));
  const NodeState& n = cluster_.node(slot);
  NodeUsage u;
  u.name = n.name;
  u.cpu_free_milli = n.cpu_free;
  u.memory_free_bytes = n.mem_free;
  u.disk_free_bytes = n.disk_free;
  u.schedulable = n.schedulable;
  for (const auto& g : n.gpus) {
    u.gpu_free_milli.push_back(g.free_milli);
    u.gpu_mig_free_mask.push_back(g.mig_free);
  }
  return u;
}

std::vector<std::string> Scheduler::NodeNames() const {
  std::vector<std::string> out;
  for (const NodeState& n : cluster_.nodes()) {
    if (n.live) {
      out.push_back(n.name);
    }
  }
  return out;
}

}  // namespace gpuaas::sched
