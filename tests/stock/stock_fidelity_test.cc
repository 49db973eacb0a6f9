// The stock service places exactly as libs/sched does. An openb cluster (every 4th GPU node of
// the trace, 304 nodes) is registered as simulated nodes, each pod shape of an openb request
// sequence becomes a spec (pinned to one GPU model: bench/stock/openb_plan.h), and the pods are
// created in the replay's arrival order (seed 42), one CreateStocks(number=1, allow_partial) at a
// time, until arrived GPU demand reaches capacity. Every placement must fit (checked in SQL
// apart from the service's code), and every decision, node and GPUs, must be the one an
// in-process Scheduler with the service's policy makes for the same nodes and the same requests
// in the same order: the service calls that engine in that order, so anything else is a bug.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "bench/stock/fill_outcome.h"
#include "bench/stock/openb_plan.h"
#include "libs/sched/replay/openb_trace.h"
#include "tests/stock/stock_test_base.h"

namespace gpuaas::stock::testing {
namespace {

constexpr char kPolicy[] = "fgd-pack";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class StockFidelityTest : public StockTest {
 protected:
  // No node falls silent during the run (no heartbeats are sent).
  StockStackOptions Options() override {
    return {.policy = kPolicy,
            .timings = {.heartbeat_interval = absl::Seconds(1), .node_timeout = absl::Hours(1)}};
  }

  // stock_gpus' allocated milli and the number of stocks, read apart from the service's code.
  std::pair<int64_t, int64_t> StoredAllocation() {
    std::pair<int64_t, int64_t> out;
    EXPECT_TRUE(stock_->pool()
                    .RunInTransaction("test.allocation",
                                      [&](db::Tx& tx) {
                                        constexpr std::string_view kAllocated =
                                            "SELECT (SELECT coalesce(sum(milli), 0)::int8 FROM "
                                            "stock.stock_gpus), (SELECT count(*) FROM "
                                            "stock.stocks)";
                                        db::Row r = *tx.Exec(kAllocated).First();
                                        out = {r.Get<int64_t>(0), r.Get<int64_t>(1)};
                                        return absl::OkStatus();
                                      })
                    .ok());
    return out;
  }
};

TEST_F(StockFidelityTest, OpenbFillPlacesLikeTheEngine) {
  auto nodes = sched::replay::ParseOpenbNodes(
      ReadFile(std::string(STOCK_TESTDATA_DIR) + "/openb_nodes_every4th.csv"));
  auto pods = sched::replay::ParseOpenbPods(
      ReadFile(std::string(SCHED_TESTDATA_DIR) + "/openb_pods_small.csv"));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_TRUE(pods.ok()) << pods.status();
  absl::StatusOr<bench::OpenbPlan> plan =
      bench::MakeOpenbPlan(*nodes, *pods, {.arrival_seed = 42, .demand_ratio = 1.0});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->nodes.size(), 304u);
  ASSERT_EQ(plan->capacity_milli, 1'548'000);

  for (const pb::Node& n : plan->nodes) {
    grpc::Status s = Register(n);
    ASSERT_TRUE(s.ok()) << n.node_id() << ": " << s.error_message();
  }
  for (const bench::PlannedSpec& p : plan->specs) {
    grpc::Status s = CreateSpec(p.spec);
    ASSERT_TRUE(s.ok()) << p.spec.spec_name() << ": " << s.error_message();
  }
  std::vector<bench::FillDecision> service;
  service.reserve(plan->arrivals.size());
  for (size_t i = 0; i < plan->arrivals.size(); ++i) {
    pb::CreateStocksResponse resp;
    const std::string& spec = plan->specs[plan->arrivals[i]].spec.spec_name();
    grpc::Status s = CreateStocks(spec, 1, &resp, absl::StrCat("fill-", i), /*allow_partial=*/true);
    ASSERT_TRUE(s.ok()) << "arrival " << i << " " << spec << ": " << s.error_message();
    absl::StatusOr<bench::FillDecision> d = bench::DecisionOf(resp);
    ASSERT_TRUE(d.ok()) << d.status();
    service.push_back(*std::move(d));
  }

  EXPECT_EQ(Overbooked(), std::vector<std::string>{});
  // The options ClusterView::Create gets from the service's flags: the policy, the rest default.
  absl::StatusOr<std::vector<bench::FillDecision>> engine =
      bench::EngineFill(*plan, sched::SchedulerOptions{.policy = kPolicy});
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ(bench::FirstDivergence(*plan, service, *engine), "");
  // The comparison can fail: another policy decides differently.
  absl::StatusOr<std::vector<bench::FillDecision>> best_fit =
      bench::EngineFill(*plan, sched::SchedulerOptions{.policy = "best-fit"});
  ASSERT_TRUE(best_fit.ok()) << best_fit.status();
  EXPECT_NE(bench::FirstDivergence(*plan, service, *best_fit), "");
  const bench::AllocationTally by_service = bench::Tally(*plan, service);
  const bench::AllocationTally by_engine = bench::Tally(*plan, *engine);
  EXPECT_EQ(by_service.placed(), by_engine.placed());
  EXPECT_EQ(by_service.allocated_milli(), by_engine.allocated_milli());
  ASSERT_FALSE(std::isnan(by_service.unalloc_at_100()));
  EXPECT_DOUBLE_EQ(by_service.unalloc_at_100(), by_engine.unalloc_at_100());
  // The tables hold what the answers said.
  EXPECT_EQ(StoredAllocation(), std::make_pair(by_service.allocated_milli(), by_service.placed()));
  // Not a degenerate run: the cluster filled up and some pods found no room.
  EXPECT_GT(by_service.failed(), 0);
  EXPECT_LT(by_service.unalloc_at_100(), 25.0);
  RecordProperty("unalloc_at_100", absl::StrCat(by_service.unalloc_at_100()));
  std::cout << "arrivals " << plan->arrivals.size() << ", specs " << plan->specs.size()
            << ", placed " << by_service.placed() << ", failed " << by_service.failed()
            << ", unallocated at 100 % demand " << by_service.unalloc_at_100() << " %\n";
}

}  // namespace
}  // namespace gpuaas::stock::testing
