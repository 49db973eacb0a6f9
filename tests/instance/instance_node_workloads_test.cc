// NodeWorkloadService over gRPC: who may call it, what it refuses, and the set a node's stream
// receives as rows are published.
#include <gtest/gtest.h>

#include "libs/testing/eventually.h"
#include "tests/instance/reconciler_test_base.h"

namespace gpuaas::instance::testing {
namespace {

using ::gpuaas::testing::Eventually;

class NodeWorkloadsTest : public ReconcilerTest {};

// Only node-0's own agent: not a tenant role, not the services' key, not a platform admin, not
// another node's agent.
TEST_F(NodeWorkloadsTest, OnlyTheNodesOwnAgentMayWatchAndReport) {
  for (const std::string& token : {member_, service_, admin_, stack_->AgentToken("node-1")}) {
    FakeAgent agent("127.0.0.1:" + std::to_string(server_->port()), token, "node-0");
    ASSERT_TRUE(Eventually([&] { return agent.ended().has_value(); }));
    EXPECT_EQ(agent.ended()->error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(agent.Report({}).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  auto own = Agent("node-0");
  EXPECT_TRUE(own->Report({}).ok());
}

TEST_F(NodeWorkloadsTest, BadRequestsNameTheField) {
  FakeAgent bad("127.0.0.1:" + std::to_string(server_->port()), stack_->AgentToken("node-0"),
                "Not A Node");
  ASSERT_TRUE(Eventually([&] { return bad.ended().has_value(); }));
  EXPECT_EQ(bad.ended()->error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.ended()->error_message().find("node_id"), std::string::npos);

  auto agent = Agent("node-0");
  pb::WorkloadStatus s;
  s.set_workload_id("x.1");
  grpc::Status got = agent->Report({s});
  EXPECT_EQ(got.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(got.error_message().find("workloads[0].instance_id"), std::string::npos);
}

TEST_F(NodeWorkloadsTest, AStreamGetsTheWholeSetAtOnceAndAgainOnEachChange) {
  auto agent = Agent("node-0", {.auto_run = false});
  ASSERT_TRUE(Eventually([&] { return agent->sets() >= 1; }));
  EXPECT_EQ(agent->last_set()->workloads_size(), 0);
  EXPECT_EQ(agent->last_set()->report_interval().seconds(), 1);
  EXPECT_EQ(agent->last_set()->node_id(), "node-0");

  // Rows published on the node by hand (the reconciler is not running).
  pb::Template t;
  t.set_cmd("true");
  Insert("a", {.tmpl = t});
  Insert("b", {.tmpl = t});
  Exec(
      "UPDATE instance.instances SET held_run = run, node_id = 'node-0', stock_id = 's', "
      "published = true WHERE instance_id IN ('a', 'b')");
  ASSERT_TRUE(Eventually([&] { return agent->last_set()->workloads_size() == 2; }));
  EXPECT_EQ(agent->last_set()->workloads(0).workload_id(), "a.1");
  EXPECT_EQ(agent->last_set()->workloads(1).workload_id(), "b.1");

  Exec("UPDATE instance.instances SET published = false WHERE instance_id = 'a'");
  ASSERT_TRUE(Eventually([&] { return agent->last_set()->workloads_size() == 1; }));
  EXPECT_EQ(agent->last_set()->workloads(0).workload_id(), "b.1");

  // A second stream of the same node gets the set too; the node is seen while they are open.
  auto second = Agent("node-0", {.auto_run = false});
  ASSERT_TRUE(Eventually([&] {
    auto set = second->last_set();
    return set && set->workloads_size() == 1;
  }));
  EXPECT_EQ(hub_->open_streams(), 2);
}

TEST_F(NodeWorkloadsTest, ACompleteReportWithoutAnUnpublishedWorkloadEndsTheWait) {
  auto agent = Agent("node-0", {.auto_run = false});
  pb::Template t;
  t.set_cmd("true");
  Insert("a", {.tmpl = t});
  Exec(
      "UPDATE instance.instances SET held_run = run, node_id = 'node-0', stock_id = 's', "
      "published = false, unpublish_time = now() - interval '1 second', needs_work = false, "
      "desired_state = 2, state = 4 WHERE instance_id = 'a'");
  ASSERT_EQ(NextStep(Row("a")), Step::kWait);
  ASSERT_TRUE(agent->Report({}, /*complete=*/true).ok());
  const WorkRow r = Row("a");
  EXPECT_EQ(r.workload_state, pb::WORKLOAD_STATE_STOPPED);
  EXPECT_EQ(NextStep(r), Step::kRelease);
}

}  // namespace
}  // namespace gpuaas::instance::testing
