// Attacks with a machine's own credential (issue 22, least privilege for machines): an attacker
// who owns one node holds that node's agent key; one who owns the proxy host holds the proxy's.
// Each key acts only as its machine: a node agent for its own node, the proxy for its access
// calls. One who steals a service's key (ROLE_SERVICE), or a platform admin's token, acts as
// neither. The platform here is real (auth, stock, storage, instance, two agents running
// sandboxed workloads).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gpuaas/storage/v1/storage.grpc.pb.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"
#include "tests/security/node_calls.h"

namespace gpuaas::security {
namespace {

namespace instancepb = ::gpuaas::instance::v1;
namespace stockpb = ::gpuaas::stock::v1;
namespace storagepb = ::gpuaas::storage::v1;

using platform_testing::PlatformStack;

constexpr grpc::StatusCode PD = grpc::StatusCode::PERMISSION_DENIED;
constexpr grpc::StatusCode NF = grpc::StatusCode::NOT_FOUND;

bool Running(const instancepb::Instance& i) { return i.state() == instancepb::STATE_RUNNING; }

// One platform for the whole suite (SetUpTestSuite): every attack here is refused, so none
// changes what the next one meets, and one stack (auth, stock, storage, instance, two agents)
// starts in seconds where one per test took most of a minute.
class MachineAttackTest : public ::testing::Test {
 protected:
  // What the suite shares.
  struct Platform {
    SuiteDatabase database;
    gpuaas::testing::TempDir dir;
    std::unique_ptr<PlatformStack> stack;
    std::string tenant;  // the victim tenant's member
    std::string victim_node;
    std::string attacker_node;
    std::string attacker;  // the attacker's node agent's token
    std::string service;   // a ROLE_SERVICE token
  };

  static void SetUpTestSuite() {
    shared_ = new Platform();
    Platform& p = *shared_;
    p.stack = StartTwoNodePlatform(p.database, p.dir.path());
    if (p.stack == nullptr) return;  // skipped or failed, and said why
    p.tenant = p.stack->CreateTenant("victim");
    p.stack->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2);
    p.stack->CreateStorage(p.tenant, "secrets");
    // The legitimate path: the victim's workload, serving HTTP, runs on one node through its
    // agent's own key.
    instancepb::CreateInstanceRequest req;
    req.set_instance_id("work");
    req.set_spec_name("a100.1x");
    req.mutable_template_()->set_cmd(
        "exec python3 -m http.server \"$GPUAAS_PORT_8080\" --bind 0.0.0.0");
    req.mutable_template_()->add_ports()->set_port(8080);
    instancepb::Instance out;
    const grpc::Status s =
        p.stack->instances().CreateInstance(PlatformStack::Ctx(p.tenant).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
    p.victim_node = p.stack->WaitInstance(p.tenant, "work", Running).node_id();
    ASSERT_FALSE(p.victim_node.empty());
    p.attacker_node = p.victim_node == "node-a" ? "node-b" : "node-a";
    p.attacker = p.stack->auth().ExchangeApiKey(p.stack->agent_api_key(p.attacker_node));
    // A service's credential as a thief holds it: ROLE_SERVICE, as the instance service's key.
    p.stack->auth().CreateServiceUser("services");
    p.service = p.stack->auth().Login("services", auth::testing::AuthStack::PasswordOf("services"));
  }
  static void TearDownTestSuite() {
    shared_->stack.reset();
    shared_->database.TearDown();
    delete shared_;
    shared_ = nullptr;
  }
  void SetUp() override {
    if (shared_->attacker.empty() || shared_->service.empty()) {
      GTEST_SKIP() << "the suite's platform did not start (see its set-up)";
    }
    stack_ = shared_->stack.get();
    tenant_ = shared_->tenant;
    victim_node_ = shared_->victim_node;
    attacker_node_ = shared_->attacker_node;
    attacker_ = shared_->attacker;
    service_ = shared_->service;
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

  grpc::Status Watch(const std::string& token, const std::string& node_id) {
    return WatchAs(*stack_, token, node_id);
  }
  grpc::Status ReportGone(const std::string& token, const std::string& node_id) {
    return ReportGoneAs(*stack_, token, node_id);
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
    return HeartbeatAs(*stack_, token, node_id);
  }

  // A one-time link's code for the victim's port 8080, as its member gets it.
  std::string AccessCode() {
    instancepb::GetInstanceAccessRequest r;
    r.set_instance_id("work");
    r.set_port(8080);
    instancepb::InstanceAccess access;
    const grpc::Status s =
        stack_->instances().GetInstanceAccess(PlatformStack::Ctx(tenant_).get(), r, &access);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return access.url().substr(access.url().find("?code=") + 6);
  }

  grpc::Status Redeem(const std::string& token, const std::string& code,
                      instancepb::AccessGrant& grant) {
    instancepb::RedeemAccessCodeRequest r;
    r.set_code(code);
    r.set_instance_id("work");
    r.set_port(8080);
    return stack_->access().RedeemAccessCode(PlatformStack::Ctx(token).get(), r, &grant);
  }

  grpc::Status CheckGrant(const std::string& token, const instancepb::AccessGrant& grant) {
    instancepb::CheckAccessGrantRequest r;
    *r.mutable_grant() = grant;
    instancepb::AccessGrant out;
    return stack_->access().CheckAccessGrant(PlatformStack::Ctx(token).get(), r, &out);
  }

  grpc::Status ProxyToken(const std::string& token) {
    instancepb::GetProxyTokenRequest r;
    r.set_instance_id("work");
    instancepb::ProxyToken out;
    return stack_->access().GetProxyToken(PlatformStack::Ctx(token).get(), r, &out);
  }

  grpc::Status ReportAccess(const std::string& token) {
    instancepb::ReportAccessRequest r;
    r.add_instance_ids("work");
    instancepb::ReportAccessResponse out;
    return stack_->access().ReportAccess(PlatformStack::Ctx(token).get(), r, &out);
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

  static inline Platform* shared_ = nullptr;
  PlatformStack* stack_ = nullptr;
  std::string tenant_;
  std::string victim_node_;
  std::string attacker_node_;
  std::string attacker_;
  std::string service_;
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
  const std::string& proxy = stack_->auth().ProxyToken();
  EXPECT_EQ(Register(proxy, VictimNode()).error_code(), PD);
  EXPECT_EQ(Heartbeat(proxy, victim_node_).error_code(), PD);
  EXPECT_EQ(Watch(proxy, victim_node_).error_code(), PD);
  EXPECT_EQ(ReportGone(proxy, victim_node_).error_code(), PD);
  ExpectNoTenantApi(proxy);
}

// A leaked service key (or a platform admin's token: a person is not a node) acts for no node;
// the node's own agent still does.
TEST_F(MachineAttackTest, AServiceKeyOrAdminCannotActAsANode) {
  for (const std::string& token : {service_, stack_->admin_token()}) {
    EXPECT_EQ(Register(token, VictimNode()).error_code(), PD);
    EXPECT_EQ(Heartbeat(token, victim_node_).error_code(), PD);
    EXPECT_EQ(Watch(token, victim_node_).error_code(), PD);
    EXPECT_EQ(ReportGone(token, victim_node_).error_code(), PD);
  }
  const std::string own = stack_->auth().ExchangeApiKey(stack_->agent_api_key(victim_node_));
  EXPECT_TRUE(Heartbeat(own, victim_node_).ok());
  EXPECT_TRUE(Watch(own, victim_node_).ok());
  instancepb::GetInstanceRequest r;
  r.set_instance_id("work");
  instancepb::Instance out;
  ASSERT_TRUE(stack_->instances().GetInstance(PlatformStack::Ctx(tenant_).get(), r, &out).ok());
  EXPECT_EQ(out.state(), instancepb::STATE_RUNNING);
}

// A leaked service key (or an admin's token) is not the proxy: it redeems no link, reads no
// proxy token, re-checks and reports nothing. The proxy's own key does all four, and its
// re-check of a member's grant holds (the instance service asks auth with its own key).
TEST_F(MachineAttackTest, AServiceKeyOrAdminCannotActAsTheProxy) {
  const std::string code = AccessCode();
  instancepb::AccessGrant grant;
  for (const std::string& token : {service_, stack_->admin_token()}) {
    EXPECT_EQ(Redeem(token, code, grant).error_code(), PD);
    EXPECT_EQ(ProxyToken(token).error_code(), PD);
    EXPECT_EQ(ReportAccess(token).error_code(), PD);
  }
  const std::string& proxy = stack_->auth().ProxyToken();
  ASSERT_TRUE(Redeem(proxy, code, grant).ok());  // the code outlived the refused attempts
  EXPECT_EQ(grant.tenant_id(), "victim");
  for (const std::string& token : {service_, stack_->admin_token()}) {
    EXPECT_EQ(CheckGrant(token, grant).error_code(), PD);
  }
  const grpc::Status checked = CheckGrant(proxy, grant);
  EXPECT_TRUE(checked.ok()) << checked.error_message();
  EXPECT_TRUE(ProxyToken(proxy).ok());
  EXPECT_TRUE(ReportAccess(proxy).ok());
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
