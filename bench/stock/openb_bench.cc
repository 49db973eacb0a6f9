// `openb`: the openb cluster registered as simulated nodes and filled through the service with
// the replay's request sequence (bench/stock/openb_plan.h: every GPU pod pinned to one model, one
// CreateStocks of one slot per pod, in BuildArrivals' order for the seed), until arrived GPU
// demand reaches capacity. Reports the unallocated GPU % there, as the replay computes it, next
// to an in-process Scheduler given the very same nodes and requests (the service should match it
// decision for decision) and to sched_replay's figures for the unpinned trace; and the
// placements per second the service sustained.
//
// Run it on a freshly started stock service: fgd-pack learns its workload from every request the
// service has placed since it started, so earlier requests make its decisions differ from the
// in-process twin's (the report says when the service was not fresh).
#include <chrono>
#include <cmath>
#include <iostream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/loadgen/latency_recorder.h"
#include "bench/stock/commands.h"
#include "bench/stock/fill_outcome.h"
#include "bench/stock/openb_plan.h"
#include "libs/common/files.h"
#include "libs/common/status_macros.h"
#include "libs/sched/replay/trace_replay.h"

namespace gpuaas::stock::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// sched_replay --policy P --seed S [--workload online] on the unpinned trace, CPU-only pods and
// all, on the plan's nodes: the figure the pinned sequence departs from.
absl::StatusOr<double> ReplayUnpinned(const std::vector<sched::replay::TraceNode>& nodes,
                                      const std::vector<sched::replay::TracePod>& pods,
                                      const OpenbOptions& o, bool oracle) {
  GPUAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<sched::replay::TraceReplay> replay,
      sched::replay::TraceReplay::Create(
          nodes, pods, {.policy = o.policy, .seed = o.seed, .oracle_workload = oracle}));
  return replay->Run().unalloc_at_100;
}

// The same on the pinned trace, CPU-only pods and all: what pinning alone changes.
absl::StatusOr<double> ReplayPinned(const std::vector<sched::replay::TraceNode>& nodes,
                                    std::vector<sched::replay::TracePod> pods,
                                    const OpenbOptions& o) {
  const std::vector<std::string> models = PinnedModels(pods, nodes, OpenbPlanOptions{}.pin_seed);
  for (size_t i = 0; i < pods.size(); ++i) {
    if (!models[i].empty()) pods[i].gpu_spec = {models[i]};
  }
  return ReplayUnpinned(nodes, pods, o, /*oracle=*/false);
}

// What the service holds that the plan did not put there.
struct Foreign {
  int64_t nodes = 0;
  int64_t stocks = 0;
};

absl::StatusOr<Foreign> ForeignState(BenchClient& client, const OpenbPlan& plan) {
  absl::flat_hash_set<std::string> ours;
  for (const pb::Node& n : plan.nodes) ours.insert(n.node_id());
  Foreign f;
  GPUAAS_ASSIGN_OR_RETURN(std::vector<pb::Node> nodes, client.AllNodes());
  for (const pb::Node& n : nodes) f.nodes += ours.contains(n.node_id()) ? 0 : 1;
  GPUAAS_ASSIGN_OR_RETURN(f.stocks, client.TotalStocks());
  return f;
}

}  // namespace

absl::StatusOr<nlohmann::json> RunOpenb(BenchClient& client, const OpenbOptions& o) {
  GPUAAS_ASSIGN_OR_RETURN(std::string nodes_csv, ReadFile(o.nodes_csv));
  GPUAAS_ASSIGN_OR_RETURN(std::string pods_csv, ReadFile(o.pods_csv));
  GPUAAS_ASSIGN_OR_RETURN(std::vector<sched::replay::TraceNode> trace_nodes,
                          sched::replay::ParseOpenbNodes(nodes_csv));
  GPUAAS_ASSIGN_OR_RETURN(std::vector<sched::replay::TracePod> pods,
                          sched::replay::ParseOpenbPods(pods_csv));
  GPUAAS_ASSIGN_OR_RETURN(OpenbPlan plan, MakeOpenbPlan(trace_nodes, pods,
                                                        {.node_stride = o.node_stride,
                                                         .arrival_seed = o.seed,
                                                         .demand_ratio = o.demand_ratio,
                                                         .node_prefix = o.node_prefix,
                                                         .spec_prefix = o.spec_prefix}));
  std::cerr << absl::StrFormat(
      "plan: %d nodes, %d GPUs, %d specs, %d arrivals (%d CPU-only pods left out)\n",
      plan.nodes.size(), plan.capacity_milli / 1000, plan.specs.size(), plan.arrivals.size(),
      plan.cpu_only_skipped);

  GPUAAS_ASSIGN_OR_RETURN(Foreign before, ForeignState(client, plan));
  const bool fresh = before.nodes == 0 && before.stocks == 0;
  if (!fresh) {
    std::cerr << absl::StrFormat(
        "warning: the service already holds %d other nodes and %d stocks; if it placed anything "
        "since it started, its learned workload differs from the in-process twin's\n",
        before.nodes, before.stocks);
  }
  Clock::time_point t0 = Clock::now();
  for (const pb::Node& n : plan.nodes) GPUAAS_RETURN_IF_ERROR(client.RegisterNode(n));
  const double register_s = Seconds(Clock::now() - t0);
  t0 = Clock::now();
  for (const PlannedSpec& s : plan.specs) GPUAAS_RETURN_IF_ERROR(client.EnsureSpec(s.spec));
  const double specs_s = Seconds(Clock::now() - t0);
  std::cerr << absl::StrFormat("registered %d nodes in %.1f s, %d specs in %.1f s\n",
                               plan.nodes.size(), register_s, plan.specs.size(), specs_s);

  const std::string run_id = absl::StrCat(absl::ToUnixMillis(absl::Now()));
  gpuaas::bench::LatencyRecorder latency;
  std::vector<FillDecision> service;
  service.reserve(plan.arrivals.size());
  t0 = Clock::now();
  for (size_t i = 0; i < plan.arrivals.size(); ++i) {
    pb::CreateStocksRequest req;
    req.set_spec_name(plan.specs[plan.arrivals[i]].spec.spec_name());
    req.set_number(1);
    req.set_allow_partial(true);
    req.set_operation_id(absl::StrCat("ob-", run_id, "-", i));
    pb::CreateStocksResponse resp;
    const Clock::time_point c0 = Clock::now();
    grpc::Status s = client.stock().CreateStocks(client.NewContext().get(), req, &resp);
    latency.Record(s.error_code(), absl::FromChrono(Clock::now() - c0));
    GPUAAS_RETURN_IF_ERROR(
        FromGrpc(s, absl::StrCat("arrival ", i, ": CreateStocks ", req.spec_name())));
    GPUAAS_ASSIGN_OR_RETURN(FillDecision d, DecisionOf(resp));
    service.push_back(std::move(d));
    if ((i + 1) % 1000 == 0) {
      std::cerr << absl::StrFormat("  %d arrivals, %.0f/s\n", i + 1,
                                   (i + 1) / Seconds(Clock::now() - t0));
    }
  }
  const double fill_s = Seconds(Clock::now() - t0);

  GPUAAS_ASSIGN_OR_RETURN(std::vector<FillDecision> engine,
                          EngineFill(plan, sched::SchedulerOptions{.policy = o.policy}));
  const AllocationTally by_service = Tally(plan, service);
  const AllocationTally by_engine = Tally(plan, engine);
  const std::string divergence = FirstDivergence(plan, service, engine);
  int64_t differing = 0;
  for (size_t i = 0; i < service.size() && i < engine.size(); ++i) {
    differing += service[i] == engine[i] ? 0 : 1;
  }

  std::vector<sched::replay::TraceNode> cluster;  // the plan's nodes, as the replay takes them
  int64_t gpu_node = 0;
  for (const sched::replay::TraceNode& n : trace_nodes) {
    if (n.gpus > 0 && gpu_node++ % o.node_stride == 0) cluster.push_back(n);
  }
  GPUAAS_ASSIGN_OR_RETURN(double replay_oracle, ReplayUnpinned(cluster, pods, o, true));
  GPUAAS_ASSIGN_OR_RETURN(double replay_online, ReplayUnpinned(cluster, pods, o, false));
  GPUAAS_ASSIGN_OR_RETURN(double replay_pinned, ReplayPinned(cluster, pods, o));

  GPUAAS_ASSIGN_OR_RETURN(Foreign after, ForeignState(client, plan));
  int64_t not_ready = 0;
  GPUAAS_ASSIGN_OR_RETURN(std::vector<pb::Node> nodes, client.AllNodes());
  for (const pb::Node& n : nodes) not_ready += n.state() == pb::NODE_STATE_READY ? 0 : 1;

  const gpuaas::bench::LatencySummary l = latency.Summarize();
  const double gap = by_service.unalloc_at_100() - by_engine.unalloc_at_100();
  std::cerr << absl::StrFormat(
      "fill: %d CreateStocks in %.1f s = %.0f placements/s (%d placed, %d not); per call p50 %.2f "
      "p99 %.2f max %.2f ms\n"
      "unallocated GPU at 100 %% demand: service %.3f %%, in-process engine (same sequence) "
      "%.3f %% (gap %.3f points, budget 0.2); %d of %d decisions differ%s%s\n"
      "sched_replay --policy %s --seed %d on the unpinned trace: %.3f %% oracle, %.3f %% online; "
      "on the pinned trace with its CPU-only pods (online): %.3f %%\n",
      plan.arrivals.size(), fill_s, plan.arrivals.size() / fill_s, by_service.placed(),
      by_service.failed(), l.p50_ms, l.p99_ms, l.max_ms, by_service.unalloc_at_100(),
      by_engine.unalloc_at_100(), gap, differing, service.size(),
      divergence.empty() ? "" : "; first: ", divergence, o.policy, o.seed, replay_oracle,
      replay_online, replay_pinned);
  if (not_ready > 0 || after.nodes > before.nodes) {
    std::cerr << absl::StrFormat(
        "warning: %d nodes NOT_READY at the end, %d foreign nodes joined during the run\n",
        not_ready, after.nodes - before.nodes);
  }
  return nlohmann::json{
      {"bench", "openb"},
      {"policy", o.policy},
      {"seed", o.seed},
      {"nodes", plan.nodes.size()},
      {"gpus", plan.capacity_milli / 1000},
      {"specs", plan.specs.size()},
      {"arrivals", plan.arrivals.size()},
      {"cpu_only_left_out", plan.cpu_only_skipped},
      {"fresh_service", fresh},
      {"register_nodes_s", register_s},
      {"create_specs_s", specs_s},
      {"fill_s", fill_s},
      {"placements_per_s", plan.arrivals.size() / fill_s},
      {"create_stocks", SummaryJson(l)},
      {"service",
       {{"unalloc_at_100", by_service.unalloc_at_100()},
        {"placed", by_service.placed()},
        {"failed", by_service.failed()}}},
      {"engine_same_sequence",
       {{"unalloc_at_100", by_engine.unalloc_at_100()},
        {"placed", by_engine.placed()},
        {"failed", by_engine.failed()}}},
      {"gap_points", gap},
      {"decisions_differing", differing},
      {"first_divergence", divergence},
      {"sched_replay_unpinned", {{"oracle", replay_oracle}, {"online", replay_online}}},
      {"engine_pinned_with_cpu_pods", replay_pinned},
      {"nodes_not_ready_at_end", not_ready},
      {"foreign_nodes_joined", after.nodes - before.nodes}};
}

}  // namespace gpuaas::stock::bench
