#include "bench/stock/openb_plan.h"

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libs/common/quantity.h"
#include "libs/gpu/gpu_models.h"
#include "libs/sched/replay/trace_replay.h"

namespace gpuaas::stock::bench {

using sched::replay::kMiB;
using sched::replay::TraceNode;
using sched::replay::TracePod;

// The draw order is PinToOneModel's (with share 1 its shuffle picks every GPU pod, so it only
// advances the generator; then one draw per pod in trace order), so the same seed pins the same
// pods alike.
std::vector<std::string> PinnedModels(const std::vector<TracePod>& pods,
                                      const std::vector<TraceNode>& nodes, uint64_t seed) {
  std::vector<std::string> out(pods.size());
  if (nodes.empty()) return out;
  std::vector<size_t> gpu_pods;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].num_gpu > 0) gpu_pods.push_back(i);
  }
  std::mt19937_64 rng(seed);
  std::shuffle(gpu_pods.begin(), gpu_pods.end(), rng);
  std::sort(gpu_pods.begin(), gpu_pods.end());
  std::map<std::string, int64_t> all_gpus;  // ordered: the draw must not depend on hashing
  for (const TraceNode& n : nodes) all_gpus[n.model] += n.gpus;
  const auto most_gpus =
      std::max_element(all_gpus.begin(), all_gpus.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  for (size_t i : gpu_pods) {
    const TracePod& p = pods[i];
    std::map<std::string, int64_t> gpus_by_model;
    for (const TraceNode& n : nodes) {
      if (n.gpus >= p.num_gpu && n.cpu_milli >= p.cpu_milli && n.memory_mib >= p.memory_mib) {
        gpus_by_model[n.model] += n.gpus;
      }
    }
    int64_t total = 0;
    for (const auto& [model, gpus] : gpus_by_model) total += gpus;
    if (total == 0) {
      out[i] = most_gpus->first;
      continue;
    }
    int64_t pick = std::uniform_int_distribution<int64_t>(0, total - 1)(rng);
    for (const auto& [model, gpus] : gpus_by_model) {
      if (pick < gpus) {
        out[i] = model;
        break;
      }
      pick -= gpus;
    }
  }
  return out;
}

namespace {

pb::Node ToNode(const TraceNode& t, const std::string& node_id, int64_t disk_bytes) {
  pb::Node n;
  n.set_node_id(node_id);
  n.set_hostname(node_id);
  n.set_cpu(FormatCpuMillis(t.cpu_milli));
  n.set_memory(FormatBytes(t.memory_mib * kMiB));
  n.set_disk(FormatBytes(disk_bytes));
  n.set_agent_version("stock-bench");
  const gpu::GpuModel* model = gpu::FindGpuModel(t.model);
  for (int32_t i = 0; i < t.gpus; ++i) {
    pb::Gpu* g = n.add_gpus();
    g->set_uuid(PlannedGpuUuid(node_id, i));
    g->set_model(t.model);
    g->set_memory_mib(int64_t{model->memory_gib} * 1024);
    g->set_healthy(true);
  }
  return n;
}

sched::NodeSpec ToNodeSpec(const pb::Node& node, const TraceNode& t, int64_t disk_bytes) {
  sched::NodeSpec s;
  s.name = node.node_id();
  s.cpu_milli = t.cpu_milli;
  s.memory_bytes = t.memory_mib * kMiB;
  s.disk_bytes = disk_bytes;
  for (int32_t i = 0; i < node.gpus_size(); ++i) {
    s.gpus.push_back(sched::GpuSpec{.index = i,
                                    .model = node.gpus(i).model(),
                                    .memory_bytes = node.gpus(i).memory_mib() * kMiB,
                                    .healthy = true});
  }
  return s;
}

// What a spec is made of; two pods with the same key share a spec.
using ShapeKey = std::tuple<std::string, int32_t, int32_t, int64_t, int64_t>;

PlannedSpec ToSpec(const ShapeKey& key, const OpenbPlanOptions& options) {
  const auto& [model, num_gpu, gpu_milli, cpu_milli, memory_bytes] = key;
  PlannedSpec p;
  pb::Spec& s = p.spec;
  s.set_spec_name(absl::StrCat(options.spec_prefix, ".", absl::AsciiStrToLower(model), ".", num_gpu,
                               "x", gpu_milli, ".c", cpu_milli, ".m", memory_bytes / kMiB));
  s.set_gpu_type(model);
  s.set_gpu_num(num_gpu);
  s.set_gpu_share_milli(gpu_milli < sched::kWholeGpuMilli ? gpu_milli : 0);
  s.set_cpu(FormatCpuMillis(cpu_milli));
  s.set_memory(FormatBytes(memory_bytes));
  s.set_disk(FormatBytes(options.spec_disk_bytes));
  s.set_description("openb pod shape (bench/stock)");
  s.mutable_price()->set_micros_per_hour(1'000'000);
  s.mutable_price()->set_currency("USD");
  p.request = sched::Request{.cpu_milli = cpu_milli,
                             .memory_bytes = memory_bytes,
                             .disk_bytes = options.spec_disk_bytes,
                             .gpu_count = num_gpu,
                             .gpu_milli = gpu_milli,
                             .gpu_models = {model}};
  p.gpu_demand_milli = int64_t{num_gpu} * gpu_milli;
  return p;
}

}  // namespace

std::string PlannedGpuUuid(const std::string& node_id, int32_t index) {
  return absl::StrCat("GPU-", node_id, "-", index);
}

int32_t PlannedGpuIndex(const std::string& node_id, const std::string& uuid) {
  absl::string_view rest = uuid;
  int32_t index = -1;
  if (!absl::ConsumePrefix(&rest, absl::StrCat("GPU-", node_id, "-")) ||
      !absl::SimpleAtoi(rest, &index)) {
    return -1;
  }
  return index;
}

absl::StatusOr<OpenbPlan> MakeOpenbPlan(const std::vector<TraceNode>& nodes,
                                        const std::vector<TracePod>& pods,
                                        const OpenbPlanOptions& options) {
  if (options.node_stride < 1) return absl::InvalidArgumentError("node_stride must be >= 1");
  if (!(options.demand_ratio > 0)) return absl::InvalidArgumentError("demand_ratio must be > 0");
  OpenbPlan plan;
  std::vector<TraceNode> cluster;
  int64_t gpu_node = 0;
  for (const TraceNode& n : nodes) {
    if (n.gpus <= 0) continue;
    if (gpu_node++ % options.node_stride != 0) continue;
    if (gpu::FindGpuModel(n.model) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", n.name, ": model ", n.model, " is not a libs/sched model"));
    }
    cluster.push_back(n);
    const std::string id = options.node_prefix + n.name;
    plan.nodes.push_back(ToNode(n, id, options.node_disk_bytes));
    plan.node_specs.push_back(ToNodeSpec(plan.nodes.back(), n, options.node_disk_bytes));
    plan.capacity_milli += int64_t{n.gpus} * sched::kWholeGpuMilli;
  }
  if (plan.capacity_milli == 0) return absl::InvalidArgumentError("the trace has no GPU nodes");

  const std::vector<std::string> pinned = PinnedModels(pods, cluster, options.pin_seed);
  // Specs in order of first arrival, one per shape that arrives.
  std::map<ShapeKey, int32_t> spec_of;
  const auto target =
      static_cast<int64_t>(options.demand_ratio * static_cast<double>(plan.capacity_milli));
  int64_t demand = 0;
  for (int32_t i : sched::replay::BuildArrivals(pods, plan.capacity_milli, options.demand_ratio,
                                                options.arrival_seed)) {
    const TracePod& p = pods[i];
    if (p.num_gpu <= 0) {
      ++plan.cpu_only_skipped;
      continue;
    }
    const ShapeKey key{pinned[i], p.num_gpu, p.gpu_milli, std::max<int64_t>(p.cpu_milli, 1),
                       std::max<int64_t>(p.memory_mib * kMiB, 1)};
    auto [it, added] = spec_of.emplace(key, static_cast<int32_t>(plan.specs.size()));
    if (added) plan.specs.push_back(ToSpec(key, options));
    plan.arrivals.push_back(it->second);
    demand += plan.specs[it->second].gpu_demand_milli;
    if (demand >= target) break;
  }
  return plan;
}

}  // namespace gpuaas::stock::bench
