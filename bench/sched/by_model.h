// Where GPU demand went, per GPU model, at the moment arrived GPU demand reaches 100 % of
// capacity: the instrument behind bench/RESULTS.md's finding on pinned variants (flexible work
// filling the models pinned work needed). Fed every decision of every seed; reports means.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "libs/sched/replay/openb_trace.h"
#include "libs/sched/types.h"

namespace gpuaas::sched::bench {

class ByModelReport final {
 public:
  explicit ByModelReport(const std::vector<replay::TraceNode>& nodes);

  void StartSeed();
  // One decision: `placement` is nullptr when the pod fit nowhere.
  void Add(const replay::TracePod& pod, const Placement* placement);
  // A table in GPUs, means over the seeds seen: per model its GPUs, the GPU demand of pods
  // that named no model placed there, the demand pinned to it alone (arrived, failed), and
  // what was free; then failures of pods allowing several models, by spec.
  std::string Format() const;

 private:
  struct Row {
    int64_t capacity = 0;  // one seed's
    int64_t flexible = 0;
    int64_t pinned = 0;
    int64_t pinned_failed = 0;
    int64_t used = 0;
  };
  absl::flat_hash_map<std::string, std::string> model_of_node_;
  std::map<std::string, Row> rows_;                           // by model, summed over seeds
  std::map<std::string, std::pair<int64_t, int64_t>> specs_;  // several models: arrived, failed
  int64_t capacity_ = 0;
  int64_t demand_ = 0;  // this seed's arrived GPU demand
  int32_t seeds_ = 0;
};

}  // namespace gpuaas::sched::bench
