// The stock service restarted after an outage longer than the node timeout, against the real
// database: for one timeout after its start it holds no node's silence during the outage against
// it (claims succeed, READY nodes stay READY), while it revives no node that was NOT_READY before;
// after that grace a node whose agent stays silent turns NOT_READY as always.
#include <gtest/gtest.h>

#include "libs/testing/eventually.h"
#include "tests/stock/stock_test_base.h"

namespace gpuaas::stock::testing {
namespace {

using gpuaas::testing::Eventually;

constexpr absl::Duration kNodeTimeout = absl::Seconds(3);

class StockRestartTest : public StockTest {
 protected:
  StockStackOptions Options() override {
    return {
        .timings = {.heartbeat_interval = absl::Milliseconds(200), .node_timeout = kNodeTimeout},
        .watch_heartbeats = true};
  }

  // One heartbeat from the node's agent.
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

TEST_F(StockRestartTest, NodesKeepTheirStateForOneTimeoutAfterARestart) {
  for (const char* id : {"a", "b", "lost"}) {
    ASSERT_TRUE(Register(SimulatedNode(id, 1, "A100-80GB")).ok());
  }
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 3, nullptr).ok());
  // Before the outage "lost" falls silent and turns NOT_READY; the others keep reporting.
  ASSERT_TRUE(Eventually([&] {
    Beat("a");
    Beat("b");
    return State("lost") == pb::NODE_STATE_NOT_READY;
  }));
  ASSERT_EQ(State("a"), pb::NODE_STATE_READY);

  // The service is down for longer than the timeout: no agent can report.
  stock_.reset();
  absl::SleepFor(kNodeTimeout * 1.5);
  stock_ = std::make_unique<StockStack>(dsn(), stack_->address(), Options());

  // Right after the restart, before any agent reported: the READY nodes' stocks are claimable
  // and the heartbeat watch leaves them READY; the NOT_READY node is not revived.
  ASSERT_TRUE(Claim("a100.1x", "ins-1", nullptr).ok());
  ASSERT_TRUE(Claim("a100.1x", "ins-2", nullptr).ok());
  EXPECT_EQ(Claim("a100.1x", "ins-3", nullptr).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << "a claim landed on the node that was NOT_READY before the restart";
  EXPECT_EQ(State("a"), pb::NODE_STATE_READY);
  EXPECT_EQ(State("b"), pb::NODE_STATE_READY);
  EXPECT_EQ(State("lost"), pb::NODE_STATE_NOT_READY);

  // "a"'s agent reconnects; "b"'s stays silent: after the grace "b" is lost, "a" is not.
  ASSERT_TRUE(Eventually([&] {
    Beat("a");
    return State("b") == pb::NODE_STATE_NOT_READY;
  }));
  EXPECT_EQ(State("a"), pb::NODE_STATE_READY);
  EXPECT_EQ(State("lost"), pb::NODE_STATE_NOT_READY);
}

}  // namespace
}  // namespace gpuaas::stock::testing
