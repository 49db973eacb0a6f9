// Every stocks, claims and nodes RPC × every role, from the tenant the caller acts in and from
// another. Stocks and nodes are platform resources: reads are open to every role, writes need
// PLATFORM_ADMIN, claims need ROLE_SERVICE (or PLATFORM_ADMIN), and the agents' calls the node's
// own agent (ROLE_NODE_AGENT bound to it) and nobody else: not the services' key, not an admin,
// not the proxy, not another node's agent.
#include <gtest/gtest.h>

#include <functional>

#include "tests/stock/stock_test_base.h"

namespace gpuaas::stock::testing {
namespace {

using auth::testing::AuthStack;
using grpc::StatusCode;

using StockPermissionsTest = StockTest;

TEST_F(StockPermissionsTest, EveryRoleOnEveryRpc) {
  for (const char* tenant : {"alpha", "beta"}) stack_->CreateTenant(tenant);
  stack_->CreateUser("viewer", "alpha", common::v1::ROLE_VIEWER);
  stack_->CreateUser("member", "alpha", common::v1::ROLE_MEMBER);
  stack_->CreateUser("tadmin", "alpha", common::v1::ROLE_TENANT_ADMIN);
  stack_->CreateUser("other", "beta", common::v1::ROLE_TENANT_ADMIN);
  enum Kind { kTenantRole, kService, kPlatform, kNodeAgent, kOtherMachine };
  struct Caller {
    const char* name;
    std::string token;
    Kind kind;
  };
  const Caller callers[] = {
      {"viewer", stack_->Login("viewer", AuthStack::PasswordOf("viewer")), kTenantRole},
      {"member", stack_->Login("member", AuthStack::PasswordOf("member")), kTenantRole},
      {"tenant-admin", stack_->Login("tadmin", AuthStack::PasswordOf("tadmin")), kTenantRole},
      {"other tenant's admin", stack_->Login("other", AuthStack::PasswordOf("other")), kTenantRole},
      {"service acting in a tenant",
       stack_->Login("robot", AuthStack::PasswordOf("robot"), "alpha"), kService},
      {"service", service_, kService},
      {"platform-admin", admin_, kPlatform},
      {"n2's agent", stack_->AgentToken("n2"), kNodeAgent},
      {"n1's agent", stack_->AgentToken("n1"), kOtherMachine},  // another node's agent
      {"proxy",
       stack_->ExchangeApiKey(stack_->CreateApiKey(admin_, "proxy", common::v1::ROLE_ACCESS_PROXY)),
       kOtherMachine},
  };
  ASSERT_TRUE(Register(SimulatedNode("n1", 8, "A100-80GB")).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 4, nullptr).ok());

  using Rpc = std::function<grpc::Status(const std::string& token, int n)>;
  auto& stub = stock_->stub();
  struct Row {
    const char* rpc;
    Rpc call;
    bool reads, service, platform;  // who gets OK; everyone else PERMISSION_DENIED
    bool node_agent = false;        // n2's own agent (the node the node rows name)
  };
  const std::vector<Row> rows = {
      {"CreateStocks",
       [&](const std::string& t, int n) {
         pb::CreateStocksRequest r;
         r.set_spec_name("a100.1x");
         r.set_number(1);
         pb::CreateStocksResponse out;
         return stub.CreateStocks(Ctx(t).get(), r, &out);
       },
       false, false, true},
      {"DeleteStocks",
       [&](const std::string& t, int n) {
         pb::DeleteStocksRequest r;
         r.set_spec_name("a100.1x");
         r.set_number(1);
         pb::DeleteStocksResponse out;
         return stub.DeleteStocks(Ctx(t).get(), r, &out);
       },
       false, false, true},
      {"ListStocks",
       [&](const std::string& t, int) {
         pb::ListStocksResponse out;
         return stub.ListStocks(Ctx(t).get(), {}, &out);
       },
       true, true, true},
      {"SearchStocks",
       [&](const std::string& t, int) {
         pb::SearchStocksRequest r;
         r.set_query("a100");
         pb::SearchStocksResponse out;
         return stub.SearchStocks(Ctx(t).get(), r, &out);
       },
       true, true, true},
      {"GetStockSummary",
       [&](const std::string& t, int) {
         pb::GetStockSummaryResponse out;
         return stub.GetStockSummary(Ctx(t).get(), {}, &out);
       },
       true, true, true},
      {"ClaimStock",
       [&](const std::string& t, int n) {
         pb::ClaimStockRequest r;
         r.set_spec_name("a100.1x");
         r.set_instance_id("ins-" + std::to_string(n));
         pb::Stock out;
         return stub.ClaimStock(Ctx(t).get(), r, &out);
       },
       false, true, true},
      {"ReleaseStock",
       [&](const std::string& t, int n) {
         pb::ReleaseStockRequest r;
         r.set_instance_id("ins-" + std::to_string(n));
         pb::ReleaseStockResponse out;
         return stub.ReleaseStock(Ctx(t).get(), r, &out);
       },
       false, true, true},
      {"ListNodes",
       [&](const std::string& t, int) {
         pb::ListNodesResponse out;
         return stub.ListNodes(Ctx(t).get(), {}, &out);
       },
       true, true, true},
      {"GetNode",
       [&](const std::string& t, int) {
         pb::GetNodeRequest r;
         r.set_node_id("n1");
         pb::Node out;
         return stub.GetNode(Ctx(t).get(), r, &out);
       },
       true, true, true},
      {"CordonNode",
       [&](const std::string& t, int) {
         pb::CordonNodeRequest r;
         r.set_node_id("n1");
         pb::Node out;
         return stub.CordonNode(Ctx(t).get(), r, &out);
       },
       false, false, true},
      {"UncordonNode",
       [&](const std::string& t, int) {
         pb::UncordonNodeRequest r;
         r.set_node_id("n1");
         pb::Node out;
         return stub.UncordonNode(Ctx(t).get(), r, &out);
       },
       false, false, true},
      {"DrainNode",
       [&](const std::string& t, int) {
         pb::DrainNodeRequest r;
         r.set_node_id("n1");
         pb::Node out;
         return stub.DrainNode(Ctx(t).get(), r, &out);
       },
       false, false, true},
      {"RegisterNode",
       [&](const std::string& t, int) {
         pb::RegisterNodeRequest r;
         *r.mutable_node() = SimulatedNode("n2", 1, "T4");
         pb::RegisterNodeResponse out;
         return stock_->agent_stub().RegisterNode(Ctx(t).get(), r, &out);
       },
       false, false, false, true},
      {"Heartbeat",
       [&](const std::string& t, int) {
         pb::HeartbeatRequest beat;
         beat.set_node_id("n2");
         return Heartbeats(t, {beat});
       },
       false, false, false, true},
  };
  int n = 0;
  for (const Row& row : rows) {
    for (const Caller& c : callers) {
      SCOPED_TRACE(std::string(row.rpc) + " as " + c.name);
      const bool allowed = c.kind == kPlatform       ? row.platform
                           : c.kind == kService      ? row.service
                           : c.kind == kNodeAgent    ? row.node_agent
                           : c.kind == kOtherMachine ? false
                                                     : row.reads;
      grpc::Status s = row.call(c.token, ++n);
      EXPECT_EQ(s.error_code(), allowed ? StatusCode::OK : StatusCode::PERMISSION_DENIED)
          << s.error_message();
    }
    EXPECT_EQ(row.call("", ++n).error_code(), StatusCode::UNAUTHENTICATED) << row.rpc;
  }
}

}  // namespace
}  // namespace gpuaas::stock::testing
