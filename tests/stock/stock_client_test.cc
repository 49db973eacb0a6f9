// client::StockClient against the real stock service (in process, on PostgreSQL, tokens from an
// in-process auth service): what other binaries and gpuaasctl see through it. The fake-server
// test beside the client (libs/client/stock_client_test.cc) covers the wiring of every RPC;
// this one covers every RPC end to end, answers and errors.
#include "libs/client/stock_client.h"

#include <gtest/gtest.h>

#include "libs/client/channel.h"
#include "libs/testing/status_matchers.h"
#include "tests/auth/auth_stack.h"
#include "tests/stock/stock_stack.h"

namespace gpuaas::stock {
namespace {

using auth::testing::AuthStack;
using auth::testing::AuthStackTest;
using client::CallContext;
using client::StockClient;
using ::gpuaas::testing::StatusIs;
using stock::testing::SimulatedNode;
using stock::testing::StockStack;
using ::testing::HasSubstr;
using ::testing::StartsWith;

pb::Spec T4(const std::string& name) {
  pb::Spec s;
  s.set_spec_name(name);
  s.set_gpu_type("T4");
  s.set_gpu_num(1);
  s.set_cpu("4");
  s.set_memory("16Gi");
  s.set_disk("100Gi");
  s.mutable_price()->set_micros_per_hour(350'000);
  s.mutable_price()->set_currency("USD");
  return s;
}

class StockClientRealTest : public AuthStackTest {
 protected:
  void SetUp() override {
    AuthStackTest::SetUp();
    if (IsSkipped()) return;
    stock_ = std::make_unique<StockStack>(dsn(), stack_->address());
    auto channel = client::OpenChannel(stock_->address(), {});
    ASSERT_OK(channel);
    client_ = std::make_unique<StockClient>(*channel, absl::Seconds(10));
  }
  void TearDown() override {
    client_.reset();
    stock_.reset();
    AuthStackTest::TearDown();
  }

  CallContext As(const std::string& token) const { return CallContext().set_bearer_token(token); }

  absl::StatusOr<pb::Spec> Create(const pb::Spec& spec, const std::string& token) {
    pb::CreateSpecRequest req;
    *req.mutable_spec() = spec;
    return client_->CreateSpec(req, As(token));
  }

  std::unique_ptr<StockStack> stock_;
  std::unique_ptr<StockClient> client_;
};

TEST_F(StockClientRealTest, SpecLifecycle) {
  ASSERT_OK_AND_ASSIGN(pb::Spec created, Create(T4("t4.1x"), admin_));
  EXPECT_EQ(created.spec_name(), "t4.1x");
  EXPECT_EQ(created.price().micros_per_hour(), 350'000);
  EXPECT_TRUE(created.has_create_time());

  pb::GetSpecRequest get;
  get.set_spec_name("t4.1x");
  ASSERT_OK_AND_ASSIGN(pb::Spec got, client_->GetSpec(get, As(admin_)));
  EXPECT_EQ(got.gpu_type(), "T4");
  EXPECT_EQ(got.memory(), "16Gi");

  pb::UpdateSpecRequest update;
  update.mutable_spec()->set_spec_name("t4.1x");
  update.mutable_spec()->set_description("inference");
  update.mutable_update_mask()->add_paths("description");
  ASSERT_OK_AND_ASSIGN(pb::Spec updated, client_->UpdateSpec(update, As(admin_)));
  EXPECT_EQ(updated.description(), "inference");
  EXPECT_EQ(updated.price().micros_per_hour(), 350'000);

  pb::DeleteSpecRequest del;
  del.set_spec_name("t4.1x");
  EXPECT_OK(client_->DeleteSpec(del, As(admin_)));
  EXPECT_THAT(client_->GetSpec(get, As(admin_)), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(StockClientRealTest, ListPagesInNameOrder) {
  for (const char* name : {"t4.c", "t4.a", "t4.b"}) {
    ASSERT_OK(Create(T4(name), admin_));
  }
  pb::ListSpecsRequest req;
  req.set_page_size(2);
  ASSERT_OK_AND_ASSIGN(pb::ListSpecsResponse first, client_->ListSpecs(req, As(admin_)));
  ASSERT_EQ(first.specs_size(), 2);
  EXPECT_EQ(first.specs(0).spec_name(), "t4.a");
  EXPECT_EQ(first.specs(1).spec_name(), "t4.b");
  ASSERT_FALSE(first.next_page_token().empty());
  req.set_page_token(first.next_page_token());
  ASSERT_OK_AND_ASSIGN(pb::ListSpecsResponse second, client_->ListSpecs(req, As(admin_)));
  ASSERT_EQ(second.specs_size(), 1);
  EXPECT_EQ(second.specs(0).spec_name(), "t4.c");
  EXPECT_TRUE(second.next_page_token().empty());
}

TEST_F(StockClientRealTest, ErrorsComeBackWithTheServersCodeAndMessage) {
  EXPECT_THAT(client_->ListSpecs({}, CallContext()), StatusIs(absl::StatusCode::kUnauthenticated));

  pb::Spec bad = T4("t4.bad");
  bad.set_memory("lots");
  auto created = Create(bad, admin_);
  EXPECT_THAT(created, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(created.status().message()), StartsWith("spec.memory: "));

  stack_->CreateTenant("alpha");
  stack_->CreateUser("viewer", "alpha", common::v1::ROLE_VIEWER);
  const std::string viewer = stack_->Login("viewer", AuthStack::PasswordOf("viewer"));
  EXPECT_THAT(Create(T4("t4.viewer"), viewer), StatusIs(absl::StatusCode::kPermissionDenied));
  ASSERT_OK(Create(T4("t4.shared"), admin_));
  pb::GetSpecRequest get;
  get.set_spec_name("t4.shared");
  EXPECT_OK(client_->GetSpec(get, As(viewer)));  // reads are open to every role

  pb::Spec other = T4("t4.shared");
  other.set_gpu_num(2);
  EXPECT_THAT(Create(other, admin_),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("t4.shared")));
}

TEST_F(StockClientRealTest, StocksClaimsAndNodes) {
  pb::RegisterNodeRequest reg;
  *reg.mutable_node() = SimulatedNode("node-1", 4, "T4");
  pb::RegisterNodeResponse registered;
  ASSERT_TRUE(
      stock_->agent_stub()
          .RegisterNode(AuthStack::Ctx(stack_->AgentToken("node-1")).get(), reg, &registered)
          .ok());
  ASSERT_OK(Create(T4("t4.1x"), admin_));

  pb::CreateStocksRequest create;
  create.set_spec_name("t4.1x");
  create.set_number(6);
  create.set_operation_id("op-1");
  EXPECT_THAT(client_->CreateStocks(create, As(admin_)),
              StatusIs(absl::StatusCode::kResourceExhausted));
  create.set_allow_partial(true);
  create.set_operation_id("op-2");
  ASSERT_OK_AND_ASSIGN(pb::CreateStocksResponse placed, client_->CreateStocks(create, As(admin_)));
  EXPECT_EQ(placed.placed(), 4);
  EXPECT_FALSE(placed.shortfall_reason().empty());

  pb::ListStocksRequest list;
  list.set_state(pb::STOCK_STATE_AVAILABLE);
  list.set_node_id("node-1");
  ASSERT_OK_AND_ASSIGN(pb::ListStocksResponse available, client_->ListStocks(list, As(admin_)));
  EXPECT_EQ(available.stocks_size(), 4);
  pb::SearchStocksRequest search;
  search.set_query("t4.");
  ASSERT_OK_AND_ASSIGN(pb::SearchStocksResponse found, client_->SearchStocks(search, As(admin_)));
  EXPECT_EQ(found.stocks_size(), 4);

  pb::ClaimStockRequest claim;
  claim.set_spec_name("t4.1x");
  claim.set_instance_id("inst-1");
  ASSERT_OK_AND_ASSIGN(pb::Stock claimed, client_->ClaimStock(claim, As(admin_)));
  EXPECT_EQ(claimed.state(), pb::STOCK_STATE_CLAIMED);
  pb::GetStockSummaryRequest summary_req;
  summary_req.set_spec_name("t4.1x");
  ASSERT_OK_AND_ASSIGN(pb::GetStockSummaryResponse summary,
                       client_->GetStockSummary(summary_req, As(admin_)));
  ASSERT_EQ(summary.counts_size(), 1);
  EXPECT_EQ(summary.counts(0).claimed(), 1);
  EXPECT_EQ(summary.counts(0).available(), 3);
  pb::ReleaseStockRequest release;
  release.set_instance_id("inst-1");
  ASSERT_OK_AND_ASSIGN(pb::ReleaseStockResponse released,
                       client_->ReleaseStock(release, As(admin_)));
  EXPECT_EQ(released.stock_id(), claimed.stock_id());

  pb::DeleteStocksRequest del;
  del.set_spec_name("t4.1x");
  del.set_number(1);
  del.set_operation_id("op-3");
  ASSERT_OK_AND_ASSIGN(pb::DeleteStocksResponse deleted, client_->DeleteStocks(del, As(admin_)));
  EXPECT_EQ(deleted.deleted(), 1);

  ASSERT_OK_AND_ASSIGN(pb::ListNodesResponse nodes, client_->ListNodes({}, As(admin_)));
  ASSERT_EQ(nodes.nodes_size(), 1);
  EXPECT_EQ(nodes.nodes(0).state(), pb::NODE_STATE_READY);
  pb::GetNodeRequest get;
  get.set_node_id("node-1");
  ASSERT_OK_AND_ASSIGN(pb::Node node, client_->GetNode(get, As(admin_)));
  EXPECT_EQ(node.gpus_size(), 4);
  pb::CordonNodeRequest cordon;
  cordon.set_node_id("node-1");
  ASSERT_OK_AND_ASSIGN(node, client_->CordonNode(cordon, As(admin_)));
  EXPECT_TRUE(node.cordoned());
  pb::UncordonNodeRequest uncordon;
  uncordon.set_node_id("node-1");
  ASSERT_OK_AND_ASSIGN(node, client_->UncordonNode(uncordon, As(admin_)));
  EXPECT_FALSE(node.cordoned());
  pb::DrainNodeRequest drain;
  drain.set_node_id("node-1");
  ASSERT_OK_AND_ASSIGN(node, client_->DrainNode(drain, As(admin_)));
  EXPECT_TRUE(node.cordoned());
  ASSERT_OK_AND_ASSIGN(available, client_->ListStocks(list, As(admin_)));
  EXPECT_EQ(available.stocks_size(), 0);

  get.set_node_id("node-2");
  EXPECT_THAT(client_->GetNode(get, As(admin_)), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(StockClientRealTest, CallContextTimeoutBoundsTheCall) {
  // A deadline already too short to reach the server fails locally, never half-done.
  EXPECT_THAT(client_->ListSpecs({}, As(admin_).set_timeout(absl::Nanoseconds(1))),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
}

}  // namespace
}  // namespace gpuaas::stock
