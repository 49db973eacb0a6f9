// Stocks through gRPC against real PostgreSQL: bulk placement checked in SQL, claims under a
// race, idempotency of every operation, node loss, draining, bad input, and two replicas
// writing at once.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "tests/stock/stock_test_base.h"

namespace gpuaas::stock::testing {
namespace {

using StockPoolTest = StockTest;

TEST_F(StockPoolTest, BulkCreateOfMixedSpecsNeverExceedsCapacity) {
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(Register(SimulatedNode("a100-" + std::to_string(i), 8, "A100-80GB")).ok());
    ASSERT_TRUE(Register(SimulatedNode("h100-" + std::to_string(i), 8, "H100-80GB")).ok());
    ASSERT_TRUE(Register(SimulatedNode("t4-" + std::to_string(i), 4, "T4", "64", "256Gi")).ok());
  }
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("h100.2x", "H100-80GB", 2, "16", "64Gi")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("t4.quarter", "T4", 1, "1", "4Gi", "10Gi", 250)).ok());

  pb::CreateStocksResponse bulk;
  ASSERT_TRUE(CreateStocks("t4.quarter", 190, &bulk).ok());
  EXPECT_EQ(bulk.placed(), 190);
  pb::CreateStocksResponse a100;
  ASSERT_TRUE(CreateStocks("a100.1x", 90, &a100).ok());
  pb::CreateStocksResponse h100;
  ASSERT_TRUE(CreateStocks("h100.2x", 40, &h100).ok());
  // 1,000 in one call: only whole A100s and H100s are left beside T4 shares; a100.1x takes
  // every remaining A100 (96 - 90 = 6) so the call must fail all-or-nothing...
  grpc::Status too_many = CreateStocks("a100.1x", 1000, nullptr);
  EXPECT_EQ(too_many.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(too_many.error_message().find("nodes fit"), std::string::npos)
      << too_many.error_message();
  EXPECT_EQ(Summary("a100.1x").total(), 90);
  // ... or place what fits and say why the rest did not.
  pb::CreateStocksResponse partial;
  ASSERT_TRUE(CreateStocks("a100.1x", 1000, &partial, "", /*allow_partial=*/true).ok());
  EXPECT_EQ(partial.placed(), 6);
  EXPECT_EQ(partial.stocks_size(), 6);
  EXPECT_NE(partial.shortfall_reason().find("gpu"), std::string::npos)
      << partial.shortfall_reason();
  EXPECT_EQ(Overbooked(), std::vector<std::string>{});

  // A thousand-slot call on a fresh spec of the T4s' remaining shares and CPU.
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(Register(SimulatedNode("big-t4-" + std::to_string(i), 4, "T4", "256", "1Ti")).ok());
  }
  ASSERT_TRUE(CreateSpec(MakeSpec("t4.tenth", "T4", 1, "100m", "1Gi", "1Gi", 100)).ok());
  pb::CreateStocksResponse thousand;
  ASSERT_TRUE(CreateStocks("t4.tenth", 1000, &thousand).ok());
  EXPECT_EQ(thousand.placed(), 1000);
  std::set<std::string> ids;
  for (const pb::Stock& s : thousand.stocks()) {
    ids.insert(s.stock_id());
    EXPECT_EQ(s.state(), pb::STOCK_STATE_AVAILABLE);
    EXPECT_EQ(s.gpu_uuids_size(), 1);
  }
  EXPECT_EQ(ids.size(), 1000u);
  EXPECT_EQ(Overbooked(), std::vector<std::string>{});
  EXPECT_EQ(Summary("t4.tenth").available(), 1000);
}

TEST_F(StockPoolTest, FiftyClaimsForTenStocks) {
  ASSERT_TRUE(Register(SimulatedNode("a100-0", 8, "A100-80GB")).ok());
  ASSERT_TRUE(Register(SimulatedNode("a100-1", 8, "A100-80GB")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 10, nullptr).ok());
  std::atomic<int> won{0}, exhausted{0}, other{0};
  std::vector<std::thread> claimers;
  std::vector<std::string> stock_of(50);
  for (int i = 0; i < 50; ++i) {
    claimers.emplace_back([&, i] {
      pb::Stock s;
      grpc::Status status = Claim("a100.1x", "ins-" + std::to_string(i), &s);
      if (status.ok()) {
        ++won;
        stock_of[i] = s.stock_id();
      } else if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        ++exhausted;
      } else {
        ++other;
        ADD_FAILURE() << status.error_message();
      }
    });
  }
  for (std::thread& t : claimers) t.join();
  EXPECT_EQ(won, 10);
  EXPECT_EQ(exhausted, 40);
  std::set<std::string> distinct;
  for (const std::string& s : stock_of) {
    if (!s.empty()) distinct.insert(s);
  }
  EXPECT_EQ(distinct.size(), 10u);
  EXPECT_EQ(Summary("a100.1x").claimed(), 10);
  EXPECT_EQ(Overbooked(), std::vector<std::string>{});
}

TEST_F(StockPoolTest, RetriesWithTheSameIdsChangeNothing) {
  ASSERT_TRUE(Register(SimulatedNode("a100-0", 8, "A100-80GB")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  pb::CreateStocksResponse first, again;
  ASSERT_TRUE(CreateStocks("a100.1x", 3, &first, "op-create-1").ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 3, &again, "op-create-1").ok());
  EXPECT_EQ(first.SerializeAsString(), again.SerializeAsString());
  EXPECT_EQ(Summary("a100.1x").total(), 3);
  EXPECT_EQ(CreateStocks("a100.1x", 4, nullptr, "op-create-1").error_code(),
            grpc::StatusCode::ALREADY_EXISTS);

  pb::Stock claimed, reclaimed;
  ASSERT_TRUE(Claim("a100.1x", "ins-1", &claimed).ok());
  ASSERT_TRUE(Claim("a100.1x", "ins-1", &reclaimed).ok());
  EXPECT_EQ(claimed.stock_id(), reclaimed.stock_id());
  EXPECT_EQ(claimed.state(), pb::STOCK_STATE_CLAIMED);
  EXPECT_EQ(claimed.instance_id(), "ins-1");
  EXPECT_EQ(Summary("a100.1x").claimed(), 1);

  pb::DeleteStocksResponse deleted, redeleted;
  ASSERT_TRUE(DeleteStocks("a100.1x", 5, &deleted, "op-delete-1").ok());
  EXPECT_EQ(deleted.deleted(), 2);  // claimed stocks are never removed
  ASSERT_TRUE(DeleteStocks("a100.1x", 5, &redeleted, "op-delete-1").ok());
  EXPECT_EQ(deleted.SerializeAsString(), redeleted.SerializeAsString());
  EXPECT_EQ(Summary("a100.1x").total(), 1);

  pb::ReleaseStockResponse released, rereleased;
  ASSERT_TRUE(Release("ins-1", &released).ok());
  EXPECT_EQ(released.stock_id(), claimed.stock_id());
  ASSERT_TRUE(Release("ins-1", &rereleased).ok());
  EXPECT_EQ(rereleased.stock_id(), "");
  EXPECT_EQ(Summary("a100.1x").available(), 1);
}

TEST_F(StockPoolTest, DeleteSpecIsRefusedWhileStocksExist) {
  ASSERT_TRUE(Register(SimulatedNode("a100-0", 8, "A100-80GB")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 1, nullptr).ok());
  pb::DeleteSpecRequest del;
  del.set_spec_name("a100.1x");
  pb::DeleteSpecResponse out;
  EXPECT_EQ(stock_->stub().DeleteSpec(Ctx(admin_).get(), del, &out).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(DeleteStocks("a100.1x", 1, nullptr).ok());
  EXPECT_TRUE(stock_->stub().DeleteSpec(Ctx(admin_).get(), del, &out).ok());
}

TEST_F(StockPoolTest, DeletionFreesWholeNodesFirst) {
  ASSERT_TRUE(Register(SimulatedNode("n1", 4, "A100-80GB")).ok());
  ASSERT_TRUE(Register(SimulatedNode("n2", 4, "A100-80GB")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 5, nullptr).ok());  // 4 on one node, 1 on the other
  pb::DeleteStocksResponse deleted;
  ASSERT_TRUE(DeleteStocks("a100.1x", 1, &deleted).ok());
  pb::ListStocksRequest list;
  pb::ListStocksResponse page;
  ASSERT_TRUE(stock_->stub().ListStocks(Ctx(admin_).get(), list, &page).ok());
  ASSERT_EQ(page.stocks_size(), 4);
  for (const pb::Stock& s : page.stocks()) EXPECT_EQ(s.node_id(), page.stocks(0).node_id());
}

TEST_F(StockPoolTest, ListSearchAndSummary) {
  ASSERT_TRUE(Register(SimulatedNode("a100-0", 8, "A100-80GB")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("big-a100.2x", "A100-80GB", 2)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 3, nullptr).ok());
  ASSERT_TRUE(CreateStocks("big-a100.2x", 2, nullptr).ok());
  ASSERT_TRUE(Claim("a100.1x", "ins-1", nullptr).ok());

  pb::ListStocksRequest list;
  list.set_page_size(2);
  pb::ListStocksResponse page;
  ASSERT_TRUE(stock_->stub().ListStocks(Ctx(admin_).get(), list, &page).ok());
  EXPECT_EQ(page.stocks_size(), 2);
  EXPECT_FALSE(page.next_page_token().empty());
  list.set_page_size(0);
  list.set_state(pb::STOCK_STATE_CLAIMED);
  ASSERT_TRUE(stock_->stub().ListStocks(Ctx(admin_).get(), list, &page).ok());
  ASSERT_EQ(page.stocks_size(), 1);
  EXPECT_EQ(page.stocks(0).instance_id(), "ins-1");

  pb::SearchStocksRequest search;
  search.set_query("a100");
  pb::SearchStocksResponse found;
  ASSERT_TRUE(stock_->stub().SearchStocks(Ctx(admin_).get(), search, &found).ok());
  EXPECT_EQ(found.stocks_size(), 3);  // prefix: a100.1x only
  search.set_substring(true);
  ASSERT_TRUE(stock_->stub().SearchStocks(Ctx(admin_).get(), search, &found).ok());
  EXPECT_EQ(found.stocks_size(), 5);
  search.set_query("a100%");
  EXPECT_EQ(stock_->stub().SearchStocks(Ctx(admin_).get(), search, &found).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  pb::GetStockSummaryResponse summary;
  ASSERT_TRUE(stock_->stub().GetStockSummary(Ctx(admin_).get(), {}, &summary).ok());
  ASSERT_EQ(summary.counts_size(), 2);
  EXPECT_EQ(summary.counts(0).spec_name(), "a100.1x");
  EXPECT_EQ(summary.counts(0).total(), 3);
  EXPECT_EQ(summary.counts(0).available(), 2);
  EXPECT_EQ(summary.counts(0).claimed(), 1);
}

TEST_F(StockPoolTest, BadInputNamesTheField) {
  ASSERT_TRUE(Register(SimulatedNode("a100-0", 8, "A100-80GB")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  const auto expect_field = [](const grpc::Status& s, const std::string& field) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << field;
    EXPECT_EQ(s.error_message().rfind(field + ": ", 0), 0u) << s.error_message();
  };
  expect_field(CreateStocks("a100.1x", 0, nullptr), "number");
  expect_field(CreateStocks("a100.1x", 10001, nullptr), "number");
  expect_field(CreateStocks("A100", 1, nullptr), "spec_name");
  expect_field(CreateStocks("a100.1x", 1, nullptr, std::string(200, 'x')), "operation_id");
  pb::CreateStocksRequest req;
  req.set_spec_name("a100.1x");
  req.set_number(1);
  pb::CreateStocksResponse out;
  for (const auto& [field, set] :
       std::vector<std::pair<std::string, std::function<void(pb::CreateStocksRequest&)>>>{
           {"cpu", [](auto& r) { r.set_cpu("4"); }},
           {"cpu", [](auto& r) { r.set_cpu("abc"); }},
           {"memory", [](auto& r) { r.set_memory("1.5Ki"); }},
           {"gpu_type", [](auto& r) { r.set_gpu_type("T4"); }},
           {"gpu_num", [](auto& r) { r.set_gpu_num(2); }}}) {
    pb::CreateStocksRequest bad = req;
    set(bad);
    expect_field(stock_->stub().CreateStocks(Ctx(admin_).get(), bad, &out), field);
  }
  // The seeds' fields are accepted when they agree with the spec, spelled any way.
  req.set_cpu("8000m");
  req.set_memory("32Gi");
  req.set_gpu_type("A100-80GB");
  req.set_gpu_num(1);
  EXPECT_TRUE(stock_->stub().CreateStocks(Ctx(admin_).get(), req, &out).ok());
  EXPECT_EQ(CreateStocks("nope.1x", 1, nullptr).error_code(), grpc::StatusCode::NOT_FOUND);
  expect_field(Claim("a100.1x", "", nullptr), "instance_id");
  pb::ListStocksRequest list;
  list.set_state(static_cast<pb::StockState>(42));
  pb::ListStocksResponse page;
  expect_field(stock_->stub().ListStocks(Ctx(admin_).get(), list, &page), "state");
  pb::Node node = SimulatedNode("bad-node", 1, "T4");
  node.mutable_gpus(0)->set_mig_enabled(true);
  expect_field(Register(node), "node.gpus[0].mig_enabled");
  // No key binds to a malformed id; the registration is validated before the node is matched
  // to the caller's, so another node's agent hears what is wrong.
  pb::RegisterNodeRequest bad_id;
  *bad_id.mutable_node() = SimulatedNode("Bad_Node", 1, "T4");
  pb::RegisterNodeResponse registered;
  expect_field(stock_->agent_stub().RegisterNode(Ctx(stack_->AgentToken("a100-0")).get(), bad_id,
                                                 &registered),
               "node.node_id");
  node = SimulatedNode("n", 2, "T4");
  node.mutable_gpus(1)->set_uuid(node.gpus(0).uuid());
  expect_field(Register(node), "node.gpus[1].uuid");
  node = SimulatedNode("n", 1, "T4", "-1");
  expect_field(Register(node), "node.cpu");
}

// Nodes whose heartbeats stop hold no claimable stock; registering again brings them back.
class NodeLossTest : public StockTest {
 protected:
  StockStackOptions Options() override {
    return {.timings = {.heartbeat_interval = absl::Milliseconds(100),
                        .node_timeout = absl::Milliseconds(500)}};
  }
};

TEST_F(NodeLossTest, SilentNodesStocksAreUnavailableUntilItReturns) {
  ASSERT_TRUE(Register(SimulatedNode("a100-0", 8, "A100-80GB")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 2, nullptr).ok());
  absl::SleepFor(absl::Milliseconds(700));
  // Even before the monitor runs, a claim skips a node not heard from within the timeout.
  EXPECT_EQ(Claim("a100.1x", "ins-1", nullptr).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ASSERT_TRUE(stock_->nodes().MarkLostNodes().ok());
  EXPECT_EQ(Summary("a100.1x").unavailable(), 2);
  pb::GetNodeRequest get;
  get.set_node_id("a100-0");
  pb::Node node;
  ASSERT_TRUE(stock_->stub().GetNode(Ctx(admin_).get(), get, &node).ok());
  EXPECT_EQ(node.state(), pb::NODE_STATE_NOT_READY);
  // No new stocks land on it either.
  EXPECT_EQ(CreateStocks("a100.1x", 1, nullptr).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);

  ASSERT_TRUE(Register(SimulatedNode("a100-0", 8, "A100-80GB")).ok());
  EXPECT_EQ(Summary("a100.1x").available(), 2);
  EXPECT_TRUE(Claim("a100.1x", "ins-1", nullptr).ok());
}

TEST_F(StockPoolTest, CordonAndDrain) {
  ASSERT_TRUE(Register(SimulatedNode("n1", 2, "A100-80GB")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 1, nullptr).ok());
  pb::CordonNodeRequest cordon;
  cordon.set_node_id("n1");
  pb::Node node;
  ASSERT_TRUE(stock_->stub().CordonNode(Ctx(admin_).get(), cordon, &node).ok());
  EXPECT_TRUE(node.cordoned());
  EXPECT_EQ(CreateStocks("a100.1x", 1, nullptr).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ASSERT_TRUE(Claim("a100.1x", "ins-1", nullptr).ok());  // existing stocks stay claimable
  pb::UncordonNodeRequest uncordon;
  uncordon.set_node_id("n1");
  ASSERT_TRUE(stock_->stub().UncordonNode(Ctx(admin_).get(), uncordon, &node).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 1, nullptr).ok());

  pb::DrainNodeRequest drain;
  drain.set_node_id("n1");
  ASSERT_TRUE(stock_->stub().DrainNode(Ctx(admin_).get(), drain, &node).ok());
  EXPECT_EQ(Summary("a100.1x").total(), 1);  // the claimed one finishes its instance
  ASSERT_TRUE(Release("ins-1").ok());
  EXPECT_EQ(Summary("a100.1x").total(), 0);  // and is not returned to a drained node
  EXPECT_EQ(stock_->stub().DrainNode(Ctx(admin_).get(), pb::DrainNodeRequest(), &node).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  drain.set_node_id("nope");
  EXPECT_EQ(stock_->stub().DrainNode(Ctx(admin_).get(), drain, &node).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// Heartbeats through the domain's stream object (the gRPC stream adapter is tested with the
// agent): an unhealthy GPU takes its unclaimed stocks out of the pool and out of placement until
// the agent reports it healthy again; a heartbeat brings a NOT_READY node back.
TEST_F(NodeLossTest, UnhealthyGpusLeaveThePoolUntilHealthyAgain) {
  ASSERT_TRUE(Register(SimulatedNode("n1", 2, "A100-80GB")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 2, nullptr).ok());
  const authz::Principal agent{
      .user_id = "agent", .role = common::v1::ROLE_NODE_AGENT, .node_id = "n1"};
  auto stream = stock_->nodes().OpenHeartbeatStream(agent);
  ASSERT_TRUE(stream.ok()) << stream.status();
  const auto beat = [&](bool gpu0_healthy, int32_t xid) {
    pb::HeartbeatRequest hb;
    hb.set_node_id("n1");
    for (int i = 0; i < 2; ++i) {
      pb::GpuMetrics* g = hb.add_gpus();
      g->set_uuid("GPU-n1-" + std::to_string(i));
      g->set_healthy(i != 0 || gpu0_healthy);
      g->set_last_xid(i == 0 ? xid : 0);
      g->set_utilization_percent(12.5);
    }
    pb::HeartbeatResponse out;
    absl::Status s = (*stream)->OnHeartbeat(hb, out);
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(out.state(), pb::NODE_STATE_READY);
  };
  beat(true, 0);
  EXPECT_EQ(Summary("a100.1x").available(), 2);
  beat(false, 79);  // fell off the bus
  EXPECT_EQ(Summary("a100.1x").available(), 1);
  EXPECT_EQ(Summary("a100.1x").unavailable(), 1);
  pb::Stock claimed;
  ASSERT_TRUE(Claim("a100.1x", "ins-1", &claimed).ok());
  EXPECT_EQ(claimed.gpu_uuids(0), "GPU-n1-1");
  EXPECT_EQ(Claim("a100.1x", "ins-2", nullptr).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  pb::DeleteStocksResponse deleted;
  ASSERT_TRUE(DeleteStocks("a100.1x", 1, &deleted).ok());  // the unavailable one goes first...
  EXPECT_EQ(deleted.deleted(), 1);
  EXPECT_EQ(CreateStocks("a100.1x", 1, nullptr).error_code(),  // ...and its GPU takes no new one
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  pb::GetNodeRequest get;
  get.set_node_id("n1");
  pb::Node node;
  ASSERT_TRUE(stock_->stub().GetNode(Ctx(admin_).get(), get, &node).ok());
  EXPECT_FALSE(node.gpus(0).healthy());
  EXPECT_EQ(node.gpus(0).last_xid(), 79);
  EXPECT_EQ(node.gpus(1).utilization_percent(), 12.5);

  beat(true, 79);  // re-probed: healthy again
  grpc::Status created = CreateStocks("a100.1x", 1, nullptr);
  ASSERT_TRUE(created.ok()) << created.error_message();
  EXPECT_EQ(Summary("a100.1x").available(), 1);

  absl::SleepFor(absl::Milliseconds(700));
  ASSERT_TRUE(stock_->nodes().MarkLostNodes().ok());
  EXPECT_EQ(Summary("a100.1x").unavailable(), 1);
  beat(true, 79);
  EXPECT_EQ(Summary("a100.1x").available(), 1);

  pb::HeartbeatRequest stranger;
  stranger.set_node_id("nobody");
  pb::HeartbeatResponse out;
  const authz::Principal strangers_agent{
      .user_id = "agent", .role = common::v1::ROLE_NODE_AGENT, .node_id = "nobody"};
  auto other = stock_->nodes().OpenHeartbeatStream(strangers_agent);
  EXPECT_EQ((*other)->OnHeartbeat(stranger, out).code(), absl::StatusCode::kNotFound);
  auto n1s = stock_->nodes().OpenHeartbeatStream(agent);  // n1's agent speaks for n1 only
  EXPECT_EQ((*n1s)->OnHeartbeat(stranger, out).code(), absl::StatusCode::kPermissionDenied);
  const authz::Principal member{.user_id = "m", .tenant_id = "t", .role = common::v1::ROLE_MEMBER};
  EXPECT_EQ(stock_->nodes().OpenHeartbeatStream(member).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(StockPoolTest, HeartbeatStreamOverGrpc) {
  ASSERT_TRUE(Register(SimulatedNode("n1", 1, "T4")).ok());
  pb::HeartbeatRequest beat;
  beat.set_node_id("n1");
  pb::GpuMetrics* gpu = beat.add_gpus();
  gpu->set_uuid("GPU-n1-0");
  gpu->set_healthy(true);
  gpu->set_temperature_celsius(61);
  std::vector<pb::HeartbeatResponse> answers;
  grpc::Status s = Heartbeats(stack_->AgentToken("n1"), {beat, beat, beat}, &answers);
  EXPECT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[2].state(), pb::NODE_STATE_READY);
  pb::GetNodeRequest get;
  get.set_node_id("n1");
  pb::Node node;
  ASSERT_TRUE(stock_->stub().GetNode(Ctx(admin_).get(), get, &node).ok());
  EXPECT_EQ(node.gpus(0).temperature_celsius(), 61);

  beat.set_node_id("unknown");
  EXPECT_EQ(Heartbeats(stack_->AgentToken("unknown"), {beat}).error_code(),
            grpc::StatusCode::NOT_FOUND);
  beat.set_node_id("Not A Node");
  EXPECT_EQ(Heartbeats(stack_->AgentToken("n1"), {beat}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// Two replicas on one database, 8 clients creating and deleting at once: afterwards no node and
// no GPU is over capacity.
TEST_F(StockPoolTest, TwoReplicasNeverOverbook) {
  StockStack second(dsn(), stack_->address());
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(Register(SimulatedNode("n" + std::to_string(i), 8, "A100-80GB", "64")).ok());
  }
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.half", "A100-80GB", 1, "4", "8Gi", "10Gi", 500)).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.4x", "A100-80GB", 4, "16")).ok());
  std::vector<std::thread> clients;
  std::atomic<int> placed{0};
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      StockStack* replica = c % 2 ? &second : stock_.get();
      const char* spec = c % 3 == 0 ? "a100.half" : (c % 3 == 1 ? "a100.1x" : "a100.4x");
      for (int round = 0; round < 6; ++round) {
        pb::CreateStocksResponse created;
        grpc::Status s = CreateStocks(spec, 3, &created, "", /*allow_partial=*/true, replica);
        EXPECT_TRUE(s.ok() || s.error_code() == grpc::StatusCode::ABORTED) << s.error_message();
        placed += created.placed();
        if (round % 2) {
          s = DeleteStocks(spec, 2, nullptr, "", replica);
          EXPECT_TRUE(s.ok()) << s.error_message();
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_GT(placed, 0);
  EXPECT_EQ(Overbooked(), std::vector<std::string>{});
}

}  // namespace
}  // namespace gpuaas::stock::testing
