#include "libs/sched/replay/openb_trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuaas::sched::replay {
namespace {

struct Table {
  absl::flat_hash_map<std::string, size_t> columns;
  std::vector<std::vector<absl::string_view>> rows;
  std::vector<int32_t> line_numbers;
};

absl::StatusOr<Table> ParseCsv(absl::string_view csv, const std::vector<std::string>& required) {
  Table t;
  int32_t line_no = 0;
  bool header = true;
  for (absl::string_view line : absl::StrSplit(csv, '\n')) {
    ++line_no;
    line = absl::StripSuffix(line, "\r");
    if (line.empty()) {
      continue;
    }
    std::vector<absl::string_view> cells = absl::StrSplit(line, ',');
    if (header) {
      for (size_t i = 0; i < cells.size(); ++i) {
        t.columns.emplace(std::string(cells[i]), i);
      }
      for (const std::string& c : required) {
        if (!t.columns.contains(c)) {
          return absl::InvalidArgumentError(absl::StrCat("CSV header lacks column ", c));
        }
      }
      header = false;
      continue;
    }
    if (cells.size() < t.columns.size()) {
      return absl::InvalidArgumentError(absl::StrCat("CSV line ", line_no, ": too few cells"));
    }
    t.rows.push_back(std::move(cells));
    t.line_numbers.push_back(line_no);
  }
  if (header) {
    return absl::InvalidArgumentError("CSV is empty");
  }
  return t;
}

template <typename T>
absl::Status Number(const Table& t, size_t row, absl::string_view column, T* out) {
  const absl::string_view cell = t.rows[row][t.columns.at(std::string(column))];
  int64_t v = 0;
  if (cell.empty()) {
    *out = 0;
    return absl::OkStatus();
  }
  if (!absl::SimpleAtoi(cell, &v) || v < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CSV line ", t.line_numbers[row], ": bad ", column, " '", cell, "'"));
  }
  *out = static_cast<T>(v);
  return absl::OkStatus();
}

absl::string_view Cell(const Table& t, size_t row, absl::string_view column) {
  return t.rows[row][t.columns.at(std::string(column))];
}

}  // namespace

absl::StatusOr<std::vector<TraceNode>> ParseOpenbNodes(absl::string_view csv) {
  auto table = ParseCsv(csv, {"sn", "cpu_milli", "memory_mib", "gpu", "model"});
  if (!table.ok()) {
    return table.status();
  }
  std::vector<TraceNode> out(table->rows.size());
  for (size_t i = 0; i < out.size(); ++i) {
    TraceNode& n = out[i];
    n.name = std::string(Cell(*table, i, "sn"));
    n.model = std::string(Cell(*table, i, "model"));
    for (absl::Status s :
         {Number(*table, i, "cpu_milli", &n.cpu_milli),
          Number(*table, i, "memory_mib", &n.memory_mib), Number(*table, i, "gpu", &n.gpus)}) {
      if (!s.ok()) {
        return s;
      }
    }
  }
  return out;
}

absl::StatusOr<std::vector<TracePod>> ParseOpenbPods(absl::string_view csv) {
  auto table = ParseCsv(csv, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"});
  if (!table.ok()) {
    return table.status();
  }
  const bool has_spec = table->columns.contains("gpu_spec");
  std::vector<TracePod> out(table->rows.size());
  for (size_t i = 0; i < out.size(); ++i) {
    TracePod& p = out[i];
    p.name = std::string(Cell(*table, i, "name"));
    for (absl::Status s :
         {Number(*table, i, "cpu_milli", &p.cpu_milli),
          Number(*table, i, "memory_mib", &p.memory_mib), Number(*table, i, "num_gpu", &p.num_gpu),
          Number(*table, i, "gpu_milli", &p.gpu_milli)}) {
      if (!s.ok()) {
        return s;
      }
    }
    if (p.num_gpu > 0 && (p.gpu_milli <= 0 || p.gpu_milli > kWholeGpuMilli ||
                          (p.num_gpu > 1 && p.gpu_milli != kWholeGpuMilli))) {
      return absl::InvalidArgumentError(
          absl::StrCat("CSV line ", table->line_numbers[i], ": bad gpu_milli for num_gpu"));
    }
    if (p.num_gpu == 0) {
      p.gpu_milli = 0;
    }
    if (has_spec) {
      const absl::string_view spec = Cell(*table, i, "gpu_spec");
      if (!spec.empty()) {
        p.gpu_spec = absl::StrSplit(spec, '|', absl::SkipEmpty());
      }
    }
  }
  return out;
}

NodeSpec ToNodeSpec(const TraceNode& node) {
  NodeSpec s;
  s.name = node.name;
  s.cpu_milli = node.cpu_milli;
  s.memory_bytes = node.memory_mib * kMiB;
  for (int32_t i = 0; i < node.gpus; ++i) {
    s.gpus.push_back(GpuSpec{.index = i, .model = node.model});
  }
  return s;
}

Request ToRequest(const TracePod& pod) {
  Request r;
  r.cpu_milli = pod.cpu_milli;
  r.memory_bytes = pod.memory_mib * kMiB;
  r.gpu_count = pod.num_gpu;
  r.gpu_milli = pod.num_gpu > 0 ? pod.gpu_milli : kWholeGpuMilli;
  r.gpu_models = pod.gpu_spec;
  return r;
}

std::vector<TraceNode> SyntheticCluster(const std::vector<TraceNode>& base, int32_t count,
                                        uint64_t seed) {
  std::vector<const TraceNode*> eight;
  for (const TraceNode& n : base) {
    if (n.gpus == 8) {
      eight.push_back(&n);
    }
  }
  std::vector<TraceNode> out;
  if (eight.empty()) {
    return out;
  }
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, eight.size() - 1);
  for (int32_t i = 0; i < count; ++i) {
    TraceNode n = *eight[pick(rng)];
    n.name = absl::StrFormat("synthetic-%05d", i);
    out.push_back(std::move(n));
  }
  return out;
}

namespace {

// Indices of `share` of the GPU pods (exactly round(share x count)), chosen seeded, in trace
// order.
std::vector<size_t> ChooseGpuPods(const std::vector<TracePod>& pods, double share,
                                  std::mt19937_64& rng) {
  std::vector<size_t> gpu_pods;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].num_gpu > 0) {
      gpu_pods.push_back(i);
    }
  }
  std::shuffle(gpu_pods.begin(), gpu_pods.end(), rng);
  const auto chosen = static_cast<size_t>(
      std::llround(std::clamp(share, 0.0, 1.0) * static_cast<double>(gpu_pods.size())));
  gpu_pods.resize(chosen);
  std::sort(gpu_pods.begin(), gpu_pods.end());
  return gpu_pods;
}

// GPUs per model over the nodes that could host `pod` on their own when empty. Ordered, so
// draws do not depend on hashing.
std::map<std::string, int64_t> HostingGpus(const TracePod& pod,
                                           const std::vector<TraceNode>& nodes) {
  std::map<std::string, int64_t> out;
  for (const TraceNode& n : nodes) {
    if (!n.model.empty() && n.gpus >= pod.num_gpu && n.cpu_milli >= pod.cpu_milli &&
        n.memory_mib >= pod.memory_mib) {
      out[n.model] += n.gpus;
    }
  }
  return out;
}

// An index drawn with probability weight / sum, or -1 when every weight is 0.
int64_t Draw(const std::vector<int64_t>& weights, std::mt19937_64& rng) {
  int64_t total = 0;
  for (int64_t w : weights) {
    total += w;
  }
  if (total <= 0) {
    return -1;
  }
  int64_t pick = std::uniform_int_distribution<int64_t>(0, total - 1)(rng);
  for (size_t i = 0; i < weights.size(); ++i) {
    if (pick < weights[i]) {
      return static_cast<int64_t>(i);
    }
    pick -= weights[i];
  }
  return -1;
}

}  // namespace

std::vector<TracePod> PinToOneModel(const std::vector<TracePod>& pods,
                                    const std::vector<TraceNode>& nodes, double share,
                                    uint64_t seed) {
  std::vector<TracePod> out = pods;
  std::mt19937_64 rng(seed);
  for (size_t i : ChooseGpuPods(out, share, rng)) {
    std::vector<std::string> models;
    std::vector<int64_t> weights;
    for (const auto& [model, gpus] : HostingGpus(out[i], nodes)) {
      models.push_back(model);
      weights.push_back(gpus);
    }
    const int64_t k = Draw(weights, rng);
    if (k >= 0) {
      out[i].gpu_spec = {models[k]};
    }
  }
  return out;
}

std::vector<TracePod> PinLikeSpecs(const std::vector<TracePod>& pods,
                                   const std::vector<TraceNode>& nodes,
                                   const std::vector<TracePod>& spec_source, double share,
                                   uint64_t seed) {
  std::map<std::vector<std::string>, int64_t> mix;
  for (const TracePod& p : spec_source) {
    if (!p.gpu_spec.empty()) {
      ++mix[p.gpu_spec];
    }
  }
  std::vector<TracePod> out = pods;
  std::mt19937_64 rng(seed);
  for (size_t i : ChooseGpuPods(out, share, rng)) {
    const std::map<std::string, int64_t> hosting = HostingGpus(out[i], nodes);
    std::vector<const std::vector<std::string>*> specs;
    std::vector<int64_t> weights;
    for (const auto& [spec, count] : mix) {
      const bool can_host = std::any_of(spec.begin(), spec.end(),
                                        [&](const std::string& m) { return hosting.contains(m); });
      if (can_host) {
        specs.push_back(&spec);
        weights.push_back(count);
      }
    }
    const int64_t k = Draw(weights, rng);
    if (k >= 0) {
      out[i].gpu_spec = *specs[k];
    }
  }
  return out;
}

}  // namespace gpuaas::sched::replay
