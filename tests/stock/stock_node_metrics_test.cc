// The nodes' readiness series (services/stock/node_state_metrics.h) against the real database:
// a node whose agent falls silent reads 0 in gpuaas_stock_node_ready and counts NOT_READY, and
// a node gone from the table loses its series. What the alert GpuaasNodeNotReady reads.
#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <optional>

#include "libs/testing/eventually.h"
#include "libs/testing/status_matchers.h"
#include "services/stock/node_state_metrics.h"
#include "tests/stock/stock_test_base.h"

namespace gpuaas::stock::testing {
namespace {

using gpuaas::testing::Eventually;

// The value of `name`'s series whose `label` is `value`; nullopt when it has none.
std::optional<double> Gauge(prometheus::Registry& registry, const std::string& name,
                            const std::string& label, const std::string& value) {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& m : family.metric) {
      for (const prometheus::ClientMetric::Label& l : m.label) {
        if (l.name == label && l.value == value) return m.gauge.value;
      }
    }
  }
  return std::nullopt;
}

class StockNodeMetricsTest : public StockTest {
 protected:
  StockStackOptions Options() override {
    return {.timings = {.heartbeat_interval = absl::Milliseconds(200),
                        .node_timeout = absl::Seconds(1)},
            .watch_heartbeats = true};
  }
  void Beat(const std::string& node_id) {
    pb::HeartbeatRequest beat;
    beat.set_node_id(node_id);
    EXPECT_TRUE(Heartbeats(stack_->AgentToken(node_id), {beat}).ok());
  }
  pb::NodeState State(const std::string& node_id) {
    pb::GetNodeRequest req;
    req.set_node_id(node_id);
    pb::Node node;
    EXPECT_TRUE(stock_->stub().GetNode(Ctx(admin_).get(), req, &node).ok());
    return node.state();
  }
};

TEST_F(StockNodeMetricsTest, ASilentNodeReadsNotReadyAndAVanishedOneLosesItsSeries) {
  prometheus::Registry registry;
  Repository repo;
  NodeStateMetrics metrics(stock_->pool(), repo, registry);
  for (const char* id : {"alive", "silent"}) {
    ASSERT_TRUE(Register(SimulatedNode(id, 1, "A100-80GB")).ok());
  }
  ASSERT_OK(metrics.Refresh());
  EXPECT_EQ(Gauge(registry, "gpuaas_stock_node_ready", "node", "silent"), 1);
  EXPECT_EQ(Gauge(registry, "gpuaas_stock_nodes", "state", "READY"), 2);
  EXPECT_EQ(Gauge(registry, "gpuaas_stock_nodes", "state", "NOT_READY"), 0);

  ASSERT_TRUE(Eventually([&] {
    Beat("alive");
    return State("silent") == pb::NODE_STATE_NOT_READY;
  }));
  ASSERT_OK(metrics.Refresh());
  EXPECT_EQ(Gauge(registry, "gpuaas_stock_node_ready", "node", "silent"), 0);
  EXPECT_EQ(Gauge(registry, "gpuaas_stock_node_ready", "node", "alive"), 1);
  EXPECT_EQ(Gauge(registry, "gpuaas_stock_nodes", "state", "READY"), 1);
  EXPECT_EQ(Gauge(registry, "gpuaas_stock_nodes", "state", "NOT_READY"), 1);

  ASSERT_OK(stock_->pool().RunInTransaction("test.delete_node", [](db::Tx& tx) {
    tx.Exec("DELETE FROM stock.nodes WHERE node_id = $1", std::string("silent"));
    return absl::OkStatus();
  }));
  ASSERT_OK(metrics.Refresh());
  EXPECT_EQ(Gauge(registry, "gpuaas_stock_node_ready", "node", "silent"), std::nullopt);
  EXPECT_EQ(Gauge(registry, "gpuaas_stock_nodes", "state", "NOT_READY"), 0);
}

}  // namespace
}  // namespace gpuaas::stock::testing
