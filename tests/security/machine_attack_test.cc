// Attacks with a machine's own credential (issue 22, least privilege for machines): an attacker
// who owns one node holds that node's agent key; one who owns the proxy host holds the proxy's.
// Each key acts only as its machine: a node agent for its own node, the proxy for its access
// calls. The platform here is real (auth, stock, storage, instance, two agents running sandboxed
// workloads).
#include <gtest/gtest.h>

#include <string>

#include "gpuaas/storage/v1/storage.grpc.pb.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::security {
namespace {

namespace instancepb = ::gpuaas::instance::v1;
namespace stockpb = ::gpuaas::stock::v1;
namespace storagepb = ::gpuaas::storage::v1;

using platform_testing::PlatformOptions;
using platform_testing::PlatformStack;

constexpr grpc::StatusCode PD = grpc::StatusCode::PERMISSION_DENIED;
constexpr grpc::StatusCode NF = grpc::StatusCode::NOT_FOUND;

bool Running(const instancepb::Instance& i) { return i.state() == instancepb::STATE_RUNNING; }

class MachineAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    PlatformOptions options;
    options.agents = {{"node-a", "1xA100-80GB"}, {"node-b", "1xA100-80GB"}};
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    tenant_ = stack_->CreateTenant("victim");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2);
    stack_->CreateStorage(tenant_, "secrets");
    // The legitimate path: the victim's workload runs on one node, through its agent's own key.
    instancepb::CreateInstanceRequest req;
    req.set_instance_id("work");
    req.set_spec_name("a100.1x");
    req.mutable_template_()->set_cmd("exec sleep 3600");
    instancepb::Instance out;
    const grpc::Status s =
        stack_->instances().CreateInstance(PlatformStack::Ctx(tenant_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
    victim_node_ = stack_->WaitInstance(tenant_, "work", Running).node_id();
    ASSERT_FALSE(victim_node_.empty());
    attacker_node_ = victim_node_ == "node-a" ? "node-b" : "node-a";
    attacker_ = stack_->auth().ExchangeApiKey(stack_->agent_api_key(attacker_node_));
    ASSERT_FALSE(attacker_.empty());
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  // The victim's node as the stock service stores it: a registration the attacker can replay.
  stockpb::Node VictimNode() {
    stockpb::GetNodeRequest r;
    r.set_node_id(victim_node_);
    stockpb::Node node;
    EXPECT_TRUE(stack_->stock_stub()
                    .GetNode(PlatformStack::Ctx(stack_->admin_token()).get(), r, &node)
                    .ok());
    return node;
  }

  // WatchWorkloads for `node_id` with `token`: how it ends, or OK when a set arrived.
  grpc::Status Watch(const std::string& token, const std::string& node_id) {
    instancepb::WatchWorkloadsRequest r;
    r.set_node_id(node_id);
    r.set_address("127.0.0.1");
    auto ctx = PlatformStack::Ctx(token);
    auto reader = stack_->node_workloads().WatchWorkloads(ctx.get(), r);
    instancepb::WorkloadSet set;
    if (reader->Read(&set)) {
      ctx->TryCancel();
      reader->Finish();
      return grpc::Status::OK;
    }
    return reader->Finish();
  }

  grpc::Status ReportGone(const std::string& token, const std::string& node_id) {
    instancepb::ReportWorkloadsRequest r;
    r.set_node_id(node_id);
    r.set_complete(true);  // "nothing runs here": every workload of the node would be marked gone
    instancepb::ReportWorkloadsResponse out;
    return stack_->node_workloads().ReportWorkloads(PlatformStack::Ctx(token).get(), r, &out);
  }

  grpc::Status Register(const std::string& token, const stockpb::Node& node) {
    stockpb::RegisterNodeRequest r;
    *r.mutable_node() = node;
    stockpb::RegisterNodeResponse out;
    auto stub = stockpb::NodeAgentService::NewStub(
        grpc::CreateChannel(stack_->stock().address(), grpc::InsecureChannelCredentials()));
    return stub->RegisterNode(PlatformStack::Ctx(token).get(), r, &out);
  }

  grpc::Status Heartbeat(const std::string& token, const std::string& node_id) {
    auto stub = stockpb::NodeAgentService::NewStub(
        grpc::CreateChannel(stack_->stock().address(), grpc::InsecureChannelCredentials()));
    auto ctx = PlatformStack::Ctx(token);
    auto stream = stub->Heartbeat(ctx.get());
    stockpb::HeartbeatRequest r;
    r.set_node_id(node_id);
    stream->Write(r);
    stream->WritesDone();
    stockpb::HeartbeatResponse out;
    while (stream->Read(&out)) {
    }
    return stream->Finish();
  }

  // The tenant APIs an attacker would aim at: the victim's instances and storages.
  void ExpectNoTenantApi(const std::string& token) {
    instancepb::GetInstanceRequest get;
    get.set_instance_id("work");
    instancepb::Instance instance;
    const grpc::Status got =
        stack_->instances().GetInstance(PlatformStack::Ctx(token).get(), get, &instance);
    EXPECT_TRUE(got.error_code() == PD || got.error_code() == NF) << got.error_message();

    instancepb::CreateInstanceRequest create;
    create.set_instance_id("planted");
    create.set_tenant_id("victim");
    create.set_spec_name("a100.1x");
    create.mutable_template_()->set_cmd("exec sleep 1");
    EXPECT_EQ(stack_->instances()
                  .CreateInstance(PlatformStack::Ctx(token).get(), create, &instance)
                  .error_code(),
              PD);

    storagepb::ListStoragesRequest list;
    storagepb::ListStoragesResponse storages;
    EXPECT_EQ(stack_->storage_stub()
                  .ListStorages(PlatformStack::Ctx(token).get(), list, &storages)
                  .error_code(),
              PD);
    storagepb::GetStorageRequest one;
    one.set_storage_id("secrets");
    storagepb::Storage storage;
    const grpc::Status read =
        stack_->storage_stub().GetStorage(PlatformStack::Ctx(token).get(), one, &storage);
    EXPECT_TRUE(read.error_code() == PD || read.error_code() == NF) << read.error_message();
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string tenant_;  // the victim tenant's member
  std::string victim_node_;
  std::string attacker_node_;
  std::string attacker_;  // the attacker's node agent's token
};

TEST_F(MachineAttackTest, AnAgentKeyCannotRegisterAsAnotherNode) {
  EXPECT_EQ(Register(attacker_, VictimNode()).error_code(), PD);
}

TEST_F(MachineAttackTest, AnAgentKeyCannotHeartbeatForAnotherNode) {
  EXPECT_EQ(Heartbeat(attacker_, victim_node_).error_code(), PD);
  EXPECT_TRUE(Heartbeat(attacker_, attacker_node_).ok());  // its own node: fine
}

TEST_F(MachineAttackTest, AnAgentKeyCannotWatchAnotherNodesWorkloads) {
  EXPECT_EQ(Watch(attacker_, victim_node_).error_code(), PD);
  EXPECT_TRUE(Watch(attacker_, attacker_node_).ok());
}

TEST_F(MachineAttackTest, AnAgentKeyCannotReportAnotherNodesWorkloadsGone) {
  EXPECT_EQ(ReportGone(attacker_, victim_node_).error_code(), PD);
  // The victim's workload still runs.
  instancepb::GetInstanceRequest r;
  r.set_instance_id("work");
  instancepb::Instance out;
  ASSERT_TRUE(stack_->instances().GetInstance(PlatformStack::Ctx(tenant_).get(), r, &out).ok());
  EXPECT_EQ(out.state(), instancepb::STATE_RUNNING);
}

TEST_F(MachineAttackTest, AnAgentKeyCannotCallTenantApis) { ExpectNoTenantApi(attacker_); }

TEST_F(MachineAttackTest, TheProxyKeyCannotCallNodeOrTenantApis) {
  const std::string proxy = stack_->auth().ExchangeApiKey(
      stack_->auth().CreateApiKey(stack_->admin_token(), "proxy", common::v1::ROLE_ACCESS_PROXY));
  EXPECT_EQ(Register(proxy, VictimNode()).error_code(), PD);
  EXPECT_EQ(Heartbeat(proxy, victim_node_).error_code(), PD);
  EXPECT_EQ(Watch(proxy, victim_node_).error_code(), PD);
  EXPECT_EQ(ReportGone(proxy, victim_node_).error_code(), PD);
  ExpectNoTenantApi(proxy);
}

TEST_F(MachineAttackTest, ATenantAdminCannotMintANodeAgentKey) {
  stack_->auth().CreateUser("boss", "victim", common::v1::ROLE_TENANT_ADMIN);
  const std::string boss = stack_->auth().Login("boss", "password-boss", "victim");
  auth::v1::CreateApiKeyRequest r;
  r.set_name("my own agent");
  r.set_role(common::v1::ROLE_NODE_AGENT);
  r.set_node_id(victim_node_);
  auth::v1::CreateApiKeyResponse out;
  EXPECT_EQ(
      stack_->auth().stub().CreateApiKey(PlatformStack::Ctx(boss).get(), r, &out).error_code(), PD);
}

}  // namespace
}  // namespace gpuaas::security
