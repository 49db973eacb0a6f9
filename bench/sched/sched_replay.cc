// sched_replay: replays an openb GPU trace through libs/sched as the FGD paper did and reports,
// per policy, the unallocated GPU % at 100 % arrived demand, the allocation ratio at 130 %,
// failed pods, decisions per second and p99 decision latency (mean ± sd over seeds).
//
//   sched_replay --nodes openb_node_list_gpu_node.csv --pods openb_pod_list_default.csv
//                --policy all|NAME [--workload oracle|online|both] [--seeds 42-51] [--json]
//                [--dump FILE] [--synthetic-nodes 5000]
//                [--pin SHARE [--pin-specs FILE] [--pin-seed N]] [--by-model]
//
// --pin derives a variant of the pod list with SHARE of the GPU pods pinned (1 = every GPU
// pod, 0.333 = a third): to one model each, drawn in proportion to the GPUs of the models that
// could host the pod (replay::PinToOneModel), or with --pin-specs to a spec drawn from the mix
// of gpu_spec values in FILE (replay::PinLikeSpecs). Drawn with --pin-seed (default 1), so
// every replay seed sees the same derived trace.
//
// --by-model adds, per policy, where the GPU demand went by GPU model when arrived demand
// reached 100 % (bench/sched/by_model.h), in the text output.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/sched/by_model.h"
#include "libs/sched/replay/trace_replay.h"
#include "nlohmann/json.hpp"

namespace gpuaas::sched::bench {
namespace {

struct Flags {
  std::string nodes, pods, policy = "all", workload, dump, seeds = "42-51", pin_specs;
  bool json = false;
  bool by_model = false;
  int32_t synthetic_nodes = 0;
  double pin = -1;  // < 0: the pod list as given
  uint64_t pin_seed = 1;
};

struct Run {
  std::string policy;
  bool oracle = false;
  std::string workload;  // as reported
};

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

bool ParseSeeds(const std::string& spec, std::vector<uint64_t>* seeds) {
  for (absl::string_view part : absl::StrSplit(spec, ',')) {
    std::vector<absl::string_view> range = absl::StrSplit(part, '-');
    uint64_t lo = 0, hi = 0;
    if (!absl::SimpleAtoi(range[0], &lo)) return false;
    hi = lo;
    if (range.size() == 2 && !absl::SimpleAtoi(range[1], &hi)) return false;
    for (uint64_t s = lo; s <= hi; ++s) seeds->push_back(s);
  }
  return !seeds->empty();
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double Sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = Mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

std::string Usage() {
  return "usage: sched_replay --nodes FILE --pods FILE [--policy all|NAME] "
         "[--workload oracle|online|both] [--seeds 42-51] [--json] [--dump FILE] "
         "[--synthetic-nodes N] [--pin SHARE [--pin-specs FILE] [--pin-seed N]] [--by-model]\n";
}

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--json") {
      f->json = true;
    } else if (a == "--by-model") {
      f->by_model = true;
    } else if (a == "--nodes") {
      if (!value(&f->nodes)) return false;
    } else if (a == "--pods") {
      if (!value(&f->pods)) return false;
    } else if (a == "--policy") {
      if (!value(&f->policy)) return false;
    } else if (a == "--workload") {
      if (!value(&f->workload)) return false;
    } else if (a == "--seeds") {
      if (!value(&f->seeds)) return false;
    } else if (a == "--dump") {
      if (!value(&f->dump)) return false;
    } else if (a == "--pin") {
      if (!value(&v) || !absl::SimpleAtod(v, &f->pin) || f->pin < 0 || f->pin > 1) return false;
    } else if (a == "--pin-specs") {
      if (!value(&f->pin_specs)) return false;
    } else if (a == "--pin-seed") {
      if (!value(&v) || !absl::SimpleAtoi(v, &f->pin_seed)) return false;
    } else if (a == "--synthetic-nodes") {
      if (!value(&v) || !absl::SimpleAtoi(v, &f->synthetic_nodes)) return false;
    } else {
      return false;
    }
  }
  return !f->nodes.empty() && !f->pods.empty() && (f->pin_specs.empty() || f->pin >= 0);
}

bool UsesWorkload(const std::string& policy) { return policy.rfind("fgd", 0) == 0; }

std::vector<Run> PlanRuns(const Flags& f) {
  std::vector<std::string> names;
  if (f.policy == "all") {
    names = PolicyNames();
  } else {
    names = absl::StrSplit(f.policy, ',');
  }
  const std::string mode =
      f.workload.empty() ? (f.policy == "all" ? "both" : "oracle") : f.workload;
  std::vector<Run> runs;
  for (const std::string& n : names) {
    if (!UsesWorkload(n)) {
      runs.push_back({n, false, "none"});
      continue;
    }
    if (mode == "oracle" || mode == "both") runs.push_back({n, true, "oracle"});
    if (mode == "online" || mode == "both") runs.push_back({n, false, "online"});
  }
  return runs;
}

std::string GpuList(const Placement& p) {
  std::string out;
  for (const GpuAssignment& g : p.gpus) {
    absl::StrAppend(&out, out.empty() ? "" : "|", g.index, ":", g.milli);
  }
  return out;
}

int Main(int argc, char** argv) {
  Flags flags;
  std::vector<uint64_t> seeds;
  if (!ParseFlags(argc, argv, &flags) || !ParseSeeds(flags.seeds, &seeds)) {
    std::cerr << Usage();
    return 2;
  }
  std::string nodes_csv, pods_csv;
  if (!ReadFile(flags.nodes, &nodes_csv) || !ReadFile(flags.pods, &pods_csv)) {
    std::cerr << "cannot read " << flags.nodes << " or " << flags.pods << "\n";
    return 1;
  }
  auto nodes = replay::ParseOpenbNodes(nodes_csv);
  auto pods = replay::ParseOpenbPods(pods_csv);
  if (!nodes.ok() || !pods.ok()) {
    std::cerr << (nodes.ok() ? pods.status() : nodes.status()) << "\n";
    return 1;
  }
  if (!flags.pin_specs.empty()) {
    std::string specs_csv;
    if (!ReadFile(flags.pin_specs, &specs_csv)) {
      std::cerr << "cannot read " << flags.pin_specs << "\n";
      return 1;
    }
    auto specs = replay::ParseOpenbPods(specs_csv);
    if (!specs.ok()) {
      std::cerr << specs.status() << "\n";
      return 1;
    }
    *pods = replay::PinLikeSpecs(*pods, *nodes, *specs, flags.pin, flags.pin_seed);
  } else if (flags.pin >= 0) {
    *pods = replay::PinToOneModel(*pods, *nodes, flags.pin, flags.pin_seed);
  }
  if (flags.synthetic_nodes > 0) {
    *nodes = replay::SyntheticCluster(*nodes, flags.synthetic_nodes, 7);
  }
  const std::vector<Run> runs = PlanRuns(flags);
  if (!flags.json) {
    std::printf("%-12s %-8s %18s %18s %8s %12s %10s\n", "policy", "workload", "unalloc@100 %",
                "alloc@130 %", "failed", "decisions/s", "p99 us");
  }
  for (const Run& run : runs) {
    std::vector<double> unalloc, alloc;
    std::vector<int64_t> latencies;
    double failed = 0, seconds = 0;
    int64_t decisions = 0;
    std::ofstream dump;
    if (!flags.dump.empty()) {
      const std::string path = runs.size() == 1
                                   ? flags.dump
                                   : absl::StrCat(flags.dump, ".", run.policy, "-", run.workload);
      dump.open(path);
      dump << "seed,seq,pod,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,node,gpus\n";
    }
    ByModelReport by_model(*nodes);
    for (uint64_t seed : seeds) {
      replay::ReplayOptions ro{.policy = run.policy, .seed = seed, .oracle_workload = run.oracle};
      auto r = replay::TraceReplay::Create(*nodes, *pods, ro);
      if (!r.ok()) {
        std::cerr << r.status() << "\n";
        return 1;
      }
      std::function<void(const replay::Decision&)> on_decision;
      by_model.StartSeed();
      if (dump.is_open() || flags.by_model) {
        on_decision = [&](const replay::Decision& d) {
          const replay::TracePod& p = (*pods)[d.pod];
          if (flags.by_model) {
            by_model.Add(p, d.placement);
          }
          if (!dump.is_open()) {
            return;
          }
          dump << seed << ',' << d.seq << ',' << p.name << ',' << p.cpu_milli << ',' << p.memory_mib
               << ',' << p.num_gpu << ',' << p.gpu_milli << ',' << absl::StrJoin(p.gpu_spec, "|")
               << ',' << (d.placement ? d.placement->node : "") << ','
               << (d.placement ? GpuList(*d.placement) : "") << '\n';
        };
      }
      // Thread CPU time, not wall time: the machine is shared, and a decision preempted by
      // another process would otherwise be charged that process's time slice.
      const auto clock = [] {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
      };
      const auto t0 = std::chrono::steady_clock::now();
      const replay::ReplayResult res = (*r)->Run(on_decision, clock, &latencies);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      unalloc.push_back(res.unalloc_at_100);
      alloc.push_back(res.alloc_at_130);
      failed += static_cast<double>(res.failed);
      decisions += res.decisions;
    }
    std::sort(latencies.begin(), latencies.end());
    const double p99_us = latencies.empty() ? 0 : latencies[latencies.size() * 99 / 100] / 1000.0;
    double decision_ns = 0;
    for (int64_t l : latencies) decision_ns += static_cast<double>(l);
    // Decision throughput counts time inside Place() only, not dumping or bookkeeping.
    const double per_s = decision_ns > 0 ? 1e9 * static_cast<double>(decisions) / decision_ns : 0;
    const double failed_mean = failed / static_cast<double>(seeds.size());
    if (flags.json) {
      nlohmann::json j = {{"policy", run.policy},
                          {"workload", run.workload},
                          {"seeds", seeds.size()},
                          {"nodes", (*nodes).size()},
                          {"unalloc_at_100_mean", Mean(unalloc)},
                          {"unalloc_at_100_sd", Sd(unalloc)},
                          {"alloc_at_130_mean", Mean(alloc)},
                          {"alloc_at_130_sd", Sd(alloc)},
                          {"failed_pods", failed_mean},
                          {"decisions_per_s", per_s},
                          {"p99_decision_us", p99_us},
                          {"wall_s", seconds}};
      std::cout << j.dump() << std::endl;
    } else {
      std::printf("%-12s %-8s %10.2f ± %5.2f %10.2f ± %5.2f %8.0f %12.0f %10.1f\n",
                  run.policy.c_str(), run.workload.c_str(), Mean(unalloc), Sd(unalloc), Mean(alloc),
                  Sd(alloc), failed_mean, per_s, p99_us);
      if (flags.by_model) {
        std::printf("%s", by_model.Format().c_str());
      }
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace gpuaas::sched::bench

int main(int argc, char** argv) { return gpuaas::sched::bench::Main(argc, argv); }
