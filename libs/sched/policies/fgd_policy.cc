#include "libs/sched/policies/fgd_policy.h"

#include <array>
#include <cmath>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "libs/sched/internal/feasibility.h"
#include "libs/sched/internal/ratio.h"
#include "libs/sched/policies/fragmentation.h"

namespace gpuaas::sched {
namespace {

using internal::CompiledRequest;
using internal::NodeState;

constexpr int32_t kMaxCachedShapes = 512;
constexpr size_t kMaxGpus = 64;
constexpr double kRefreshL1 = 0.05;

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

using internal::Ratio;

class FgdPolicy final : public Policy {
 public:
  FgdPolicy(const FgdOptions& fgd, const PolicyOptions& options)
      : fgd_(fgd),
        models_(options.models),
        capacity_(options.capacity),
        online_(!options.workload.has_value()) {
    if (options.workload) {
      workload_ = *options.workload;
    }
  }

  absl::string_view Name() const override { return fgd_.name; }
  bool RandomTies() const override { return fgd_.random_ties; }
  absl::string_view WorkloadMode() const override { return online_ ? "online" : "oracle"; }

  void Observe(const CompiledRequest& req) override {
    const Request& r = *req.request;
    if (online_) {
      counter_.Add(r);
      if (counter_.total() >= next_refresh_) {
        next_refresh_ *= 2;
        Workload fresh = counter_.Typical();
        // Every refresh invalidates all cached deltas; skip the ones that barely move M.
        if (!NearlySame(fresh, workload_)) {
          workload_ = std::move(fresh);
          dirty_ = true;
        }
      }
    }
    if (dirty_ || measure_.compiled_models() != models_->size()) {
      measure_.Compile(workload_, *models_, fgd_.common_share);
      ++epoch_;
      dirty_ = false;
    }
    const int32_t milli = req.gpu_count > 0 ? req.gpu_milli : 0;
    auto [it, inserted] = shape_ids_.try_emplace(
        ShapeKey{r.cpu_milli, req.gpu_count, milli, absl::StrJoin(r.gpu_models, "|")},
        static_cast<int32_t>(shape_ids_.size()));
    shape_ = it->second < kMaxCachedShapes && !req.mig ? it->second : -1;
    same_state_.clear();
    if (fgd_.pressure_weight != 0) {
      ObservePinned(req);
    }
  }

  NodeScore Score(uint32_t slot, const NodeState& node, const CompiledRequest& req) override {
    const Entry e = Delta(slot, node, req);
    NodeScore s;
    s.share_gpu = e.gpu;
    const bool cpu_only = req.gpu_count == 0;
    if (cpu_only && fgd_.exact_cpu_only) {
      s.score = e.growth.frag / 1000.0;
    } else if (fgd_.paper_quantization) {
      // int64(sigmoid(reduction / 1000) * MaxNodeScore), maximised.
      s.score = -std::floor(Sigmoid(-e.growth.frag / 1000.0) * 100.0);
    } else {
      s.score = Steps(e.growth.frag);
    }
    if (fgd_.unusable_weight != 0) {
      // Quantised on its own: rounded together with F's delta it does worse (bench/RESULTS.md).
      s.score += Steps(e.growth.unusable);
    }
    if (cpu_only && fgd_.cpu_pack != 0) {
      s.score += fgd_.cpu_pack * static_cast<double>(node.gpu_free_total) / 8000.0;
    }
    if (fgd_.untouched_penalty != 0 && node.placements == 0) {
      s.score += fgd_.untouched_penalty;
    }
    // Nodes with several models (none in openb, rare in a fleet) pay no pressure.
    if (use_pressure_ && node.model_key > internal::kMixedModel &&
        static_cast<size_t>(node.model_key) < pressure_.size()) {
      s.score += pressure_[node.model_key];
    }
    if (fgd_.bestfit_weight != 0) {
      s.score += fgd_.bestfit_weight *
                 (Ratio(node.cpu_free - req.request->cpu_milli, node.cpu_cap) +
                  Ratio(node.gpu_free_total - req.TotalGpuMilli(), node.gpu_cap_total));
    }
    return s;
  }

 private:
  // Model pressure. Every GPU request adds its demand to the total and, when it names the
  // models it allows, to its model set's tally. For a request that may use several models,
  // each model's pressure is then the share of all GPU demand pinned to it (a set of several
  // models splits its tally in proportion to their free capacity) over its share of the free
  // GPU capacity. Near or above 1, the model's pinned demand alone will take what is left of
  // it, so a flexible request placed there takes a GPU a pinned request will lack.
  void ObservePinned(const CompiledRequest& req) {
    use_pressure_ = false;
    if (req.gpu_count == 0 || req.mig) {
      return;  // CPU-only requests gained nothing from pressure (bench/RESULTS.md)
    }
    const auto milli = static_cast<double>(req.TotalGpuMilli());
    demand_milli_ += milli;
    if (!req.any_model) {
      std::vector<int16_t> set;
      for (size_t m = 0; m < req.allowed.size(); ++m) {
        if (req.allowed[m]) {
          set.push_back(static_cast<int16_t>(m));
        }
      }
      const bool choice = set.size() > 1;
      if (!set.empty()) {
        auto [it, inserted] = pinned_index_.try_emplace(set, pinned_.size());
        if (inserted) {
          pinned_.push_back({std::move(set), 0});
        }
        pinned_[it->second].second += milli;
      }
      if (!choice) {
        return;  // one model (or none known): nothing to choose between
      }
    }
    if (pinned_.empty()) {
      return;
    }
    use_pressure_ = true;
    const int32_t n = capacity_->models();
    pressure_.assign(n, 0);
    for (const auto& [set, tally] : pinned_) {
      double free = 0;
      for (int16_t m : set) {
        free += static_cast<double>(capacity_->free_milli(m));
      }
      for (int16_t m : set) {
        if (free > 0 && m < n) {
          pressure_[m] += tally * static_cast<double>(capacity_->free_milli(m)) / free;
        }
      }
    }
    const double total_free = static_cast<double>(capacity_->total_free_milli());
    for (int16_t m = 0; m < n; ++m) {
      const double free = static_cast<double>(capacity_->free_milli(m));
      // (pinned[m] / demand) / (free[m] / total_free), as score steps.
      pressure_[m] =
          free > 0 ? fgd_.pressure_weight * (pressure_[m] / demand_milli_) * (total_free / free)
                   : 0;
    }
  }

  // What a node state scores before or after a placement, or the growth a placement causes;
  // milli-GPU.
  struct Measures {
    double frag = 0;      // F (plus weighted Unbacked)
    double unusable = 0;  // weighted Unusable
  };
  struct Entry {
    uint64_t version = 0;
    uint64_t epoch = 0;
    Measures growth;
    int32_t gpu = -1;
  };
  // A node state as far as the measures and the GPU choice are concerned; equal keys, equal
  // answers.
  struct StateKey {
    int64_t cpu_free;
    int64_t memory_free;
    int16_t model;
    uint16_t shareable;  // bit i: GPU position i is shareable
    std::array<int32_t, 8> free;
    template <typename H>
    friend H AbslHashValue(H h, const StateKey& k) {
      return H::combine(std::move(h), k.cpu_free, k.memory_free, k.model, k.shareable, k.free);
    }
    friend bool operator==(const StateKey&, const StateKey&) = default;
  };
  struct ShapeKey {
    int64_t cpu;
    int32_t count;
    int32_t milli;
    std::string models;
    template <typename H>
    friend H AbslHashValue(H h, const ShapeKey& k) {
      return H::combine(std::move(h), k.cpu, k.count, k.milli, k.models);
    }
    friend bool operator==(const ShapeKey&, const ShapeKey&) = default;
  };

  Entry Delta(uint32_t slot, const NodeState& node, const CompiledRequest& req) {
    Entry* cached = nullptr;
    if (shape_ >= 0) {
      if (cache_.size() <= slot) {
        cache_.resize(slot + 1);
      }
      auto& per_shape = cache_[slot];
      if (per_shape.size() <= static_cast<size_t>(shape_)) {
        per_shape.resize(shape_ + 1);
      }
      cached = &per_shape[shape_];
      if (cached->version == node.version && cached->epoch == epoch_) {
        return *cached;
      }
    }
    Entry e;
    if (node.gpus.size() <= 8) {
      // Identical nodes (a rack of untouched ones, say) are computed once per decision.
      // Only the longer-sighted measures read memory; without them nodes that differ in memory
      // alone still share one computation.
      const bool memory_matters = fgd_.unbacked_weight != 0 || fgd_.unusable_weight != 0;
      StateKey key{node.cpu_free, memory_matters ? node.mem_free : 0, node.model_key, 0, {}};
      for (size_t i = 0; i < node.gpus.size(); ++i) {
        key.shareable |= node.gpus[i].Shareable() ? uint16_t(1u << i) : uint16_t{0};
        key.free[i] = node.gpus[i].free_milli;
      }
      auto [it, inserted] = same_state_.try_emplace(key);
      if (inserted) {
        it->second = Compute(node, req);
      }
      e = it->second;
      e.version = node.version;
    } else {
      e = Compute(node, req);
    }
    if (cached != nullptr) {
      *cached = e;
    }
    return e;
  }

  static bool NearlySame(const Workload& a, const Workload& b) {
    if (a.shapes.size() != b.shapes.size()) {
      return false;
    }
    double l1 = 0;
    for (size_t i = 0; i < a.shapes.size(); ++i) {
      const WorkloadShape& x = a.shapes[i];
      const WorkloadShape& y = b.shapes[i];
      if (x.cpu_milli != y.cpu_milli || x.gpu_count != y.gpu_count || x.gpu_milli != y.gpu_milli ||
          x.gpu_models != y.gpu_models) {
        return false;
      }
      l1 += std::abs(x.probability - y.probability);
    }
    return l1 < kRefreshL1;
  }

  // A delta in milli-GPU as a score: whole quantum steps (deltas within a step count as equal),
  // or GPUs when not quantising.
  double Steps(double milli) const {
    return fgd_.quantum_milli > 0 ? std::floor(milli / fgd_.quantum_milli) : milli / 1000.0;
  }

  Measures MeasureNode(int64_t cpu_free, int64_t memory_free, std::span<const FragGpu> gpus,
                       int16_t node_model) const {
    Measures m;
    m.frag = measure_.Measure(cpu_free, gpus, node_model);
    if (fgd_.unbacked_weight != 0) {
      m.frag += fgd_.unbacked_weight * measure_.Unbacked(cpu_free, memory_free, gpus);
    }
    if (fgd_.unusable_weight != 0) {
      m.unusable = fgd_.unusable_weight * measure_.Unusable(cpu_free, memory_free, gpus);
    }
    return m;
  }

  Entry Compute(const NodeState& node, const CompiledRequest& req) {
    std::array<FragGpu, kMaxGpus> gpus;
    std::array<int32_t, kMaxGpus> position;
    size_t n = 0;
    for (size_t i = 0; i < node.gpus.size() && n < kMaxGpus; ++i) {
      if (node.gpus[i].Shareable()) {
        gpus[n] = {node.gpus[i].free_milli, node.gpus[i].model};
        position[n++] = static_cast<int32_t>(i);
      }
    }
    const std::span<const FragGpu> view(gpus.data(), n);
    const Measures before = MeasureNode(node.cpu_free, node.mem_free, view, node.model_key);
    const int64_t cpu_after = node.cpu_free - req.request->cpu_milli;
    const int64_t memory_after = node.mem_free - req.request->memory_bytes;
    const auto growth = [&]() {
      const Measures after = MeasureNode(cpu_after, memory_after, view, node.model_key);
      return Measures{after.frag - before.frag, after.unusable - before.unusable};
    };
    Entry e;
    e.version = node.version;
    e.epoch = epoch_;
    if (req.gpu_count == 0 || req.mig) {
      e.growth = growth();
      return e;
    }
    if (!req.share) {
      int32_t taken = 0;
      for (size_t k = 0; k < n && taken < req.gpu_count; ++k) {
        if (gpus[k].free_milli == kWholeGpuMilli && req.ModelAllowed(gpus[k].model)) {
          gpus[k].free_milli = 0;
          ++taken;
        }
      }
      e.growth = growth();
      return e;
    }
    double best_key = 0;
    for (size_t k = 0; k < n; ++k) {
      const FragGpu g = gpus[k];
      if (g.free_milli < req.gpu_milli || !req.ModelAllowed(g.model)) {
        continue;
      }
      bool seen = false;  // GPUs with the same free share give the same delta
      for (size_t j = 0; j < k && !seen; ++j) {
        seen = gpus[j].free_milli == g.free_milli && gpus[j].model == g.model &&
               req.ModelAllowed(g.model);
      }
      if (seen) {
        continue;
      }
      gpus[k].free_milli -= req.gpu_milli;
      const Measures d = growth();
      gpus[k].free_milli = g.free_milli;
      // The artifact keeps the first GPU among equal quantised scores.
      const double key = fgd_.paper_quantization ? -std::floor(Sigmoid(-d.frag / 1000.0) * 100.0)
                                                 : d.frag + d.unusable;
      if (e.gpu < 0 || key < best_key) {
        best_key = key;
        e.growth = d;
        e.gpu = position[k];
      }
    }
    return e;
  }

  FgdOptions fgd_;
  const internal::ModelRegistry* models_;
  const internal::ModelCapacity* capacity_;
  bool online_;
  Workload workload_;
  ShapeCounter counter_;
  int64_t next_refresh_ = 1;
  bool dirty_ = true;
  FragmentationMeasure measure_;
  uint64_t epoch_ = 0;
  absl::flat_hash_map<ShapeKey, int32_t> shape_ids_;
  int32_t shape_ = -1;
  std::vector<std::vector<Entry>> cache_;            // [slot][shape]
  absl::flat_hash_map<StateKey, Entry> same_state_;  // this decision's computed states
  double demand_milli_ = 0;                          // all GPU demand seen
  // GPU demand by allowed model set, in first-seen order so sums do not depend on hashing.
  std::vector<std::pair<std::vector<int16_t>, double>> pinned_;
  absl::flat_hash_map<std::vector<int16_t>, size_t> pinned_index_;
  bool use_pressure_ = false;     // this decision weighs model pressure
  std::vector<double> pressure_;  // by model id, in score steps, for this decision
};

}  // namespace

PolicyPtr MakeFgdPolicy(const FgdOptions& fgd, const PolicyOptions& options) {
  return std::make_unique<FgdPolicy>(fgd, options);
}

}  // namespace gpuaas::sched
