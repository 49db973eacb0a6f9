#include "libs/sched/policy.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libs/sched/policies/fgd_policy.h"
#include "libs/sched/policies/simple_policies.h"

namespace gpuaas::sched {

std::vector<std::string> PolicyNames() {
  return {"random",      "first-fit", "best-fit",  "spread",  "dot-product",
          "gpu-packing", "fgd",       "fgd-exact", "fgd-pack"};
}

absl::StatusOr<PolicyPtr> MakePolicy(absl::string_view name, const PolicyOptions& options) {
  if (name == "random") return MakeRandomPolicy(options.seed);
  if (name == "first-fit") return MakeFirstFitPolicy();
  if (name == "best-fit") return MakeBestFitPolicy();
  if (name == "spread") return MakeSpreadPolicy();
  if (name == "dot-product") return MakeDotProductPolicy();
  if (name == "gpu-packing") return MakeGpuPackingPolicy();
  if (options.models == nullptr || options.capacity == nullptr) {
    return absl::InvalidArgumentError("PolicyOptions.models and .capacity are required");
  }
  if (name == "fgd") {
    // The artifact's behaviour: quantised scores, first node (trace order) among equals.
    return MakeFgdPolicy(FgdOptions{.paper_quantization = true, .name = "fgd"}, options);
  }
  if (name == "fgd-exact") {
    return MakeFgdPolicy(FgdOptions{.paper_quantization = false, .name = "fgd-exact"}, options);
  }
  if (name == "fgd-pack") {
    // Ours: F's delta plus a fifth of the GPU share the node's CPU and memory could no longer
    // back (so CPU-hungry tasks go where CPU is plentiful), in 100 milli-GPU steps (deltas
    // within a step count as equal), plus the growth of GPU share that no common shape can
    // ever use, in its own steps. Among equals, CPU-only tasks go where the fewest GPUs are
    // free and GPU tasks fill nodes already in use before opening an untouched one; then trace
    // order. A request that may use several GPU models also pays ten steps per unit of model
    // pressure, so it leaves the models that pinned requests need to them: no node-local
    // measure sees that a whole GPU taken there is one a pinned request will lack.
    return MakeFgdPolicy(FgdOptions{.quantum_milli = 100,
                                    .untouched_penalty = 0.5,
                                    .cpu_pack = 0.4,
                                    .unbacked_weight = 0.2,
                                    .unusable_weight = 1,
                                    .common_share = 0.01,
                                    .pressure_weight = 10,
                                    .name = "fgd-pack"},
                         options);
  }
  if (absl::StartsWith(name, "fgd:")) {
    // Experiments: fgd:q=0|1:random=0|1:bf=<weight>:quantum=<milli>:untouched=<penalty>:
    // cpupack=<weight>:cpuexact=0|1:unbacked=<weight>:unusable=<weight>:common=<share>:
    // pressure=<weight>
    FgdOptions fgd{.name = std::string(name)};
    for (absl::string_view kv : absl::StrSplit(name.substr(4), ':', absl::SkipEmpty())) {
      std::pair<std::string, std::string> p = absl::StrSplit(kv, '=');
      double v = 0;
      if (!absl::SimpleAtod(p.second, &v)) {
        return absl::InvalidArgumentError(absl::StrCat("bad policy option: ", kv));
      }
      if (p.first == "q")
        fgd.paper_quantization = v != 0;
      else if (p.first == "random")
        fgd.random_ties = v != 0;
      else if (p.first == "bf")
        fgd.bestfit_weight = v;
      else if (p.first == "quantum")
        fgd.quantum_milli = v;
      else if (p.first == "untouched")
        fgd.untouched_penalty = v;
      else if (p.first == "cpupack")
        fgd.cpu_pack = v;
      else if (p.first == "cpuexact")
        fgd.exact_cpu_only = v != 0;
      else if (p.first == "unbacked")
        fgd.unbacked_weight = v;
      else if (p.first == "unusable")
        fgd.unusable_weight = v;
      else if (p.first == "common")
        fgd.common_share = v;
      else if (p.first == "pressure")
        fgd.pressure_weight = v;
      else
        return absl::InvalidArgumentError(absl::StrCat("bad policy option: ", kv));
    }
    return MakeFgdPolicy(fgd, options);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown policy: ", name));
}

}  // namespace gpuaas::sched
