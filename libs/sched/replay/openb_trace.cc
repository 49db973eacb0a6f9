#include "libs/sched/replay/openb_trace.h"

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

}  // namespace gpuaas::sched::replay
