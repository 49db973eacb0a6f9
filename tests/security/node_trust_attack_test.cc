// Nodes are untrusted (issue 32): an attacker who owns a node, by a program of its own on the
// agent's port or by the node's stolen key, gets nothing that acts beyond that node's own work.
// The control plane calls an agent only with a token minted for that node and that purpose
// (authz::RequireAgentCall): the attacker's program captures one, and it is refused by every
// service, by the auth service and by every other agent. The node's key makes its own node's
// calls and nothing else. The platform here is real (auth, stock, storage, instance, two agents
// running sandboxed workloads); the attacker's program is a gRPC server in this test. Before
// the fix, the token the program captured was the instance service's own SERVICE token: it
// listed every tenant's instances, read their logs and storages, and asked every agent.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "gpuaas/instance/v1/workload_logs.grpc.pb.h"
#include "gpuaas/instance/v1/workload_sessions.grpc.pb.h"
#include "gpuaas/storage/v1/storage.grpc.pb.h"
#include "libs/testing/eventually.h"
#include "libs/testing/permission_matrix.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "services/storage/s3/testing/raw_client.h"
#include "tests/platform/platform_stack.h"
#include "tests/security/node_calls.h"

namespace gpuaas::security {
namespace {

namespace authpb = ::gpuaas::auth::v1;
namespace instancepb = ::gpuaas::instance::v1;
namespace stockpb = ::gpuaas::stock::v1;
namespace storagepb = ::gpuaas::storage::v1;

using gpuaas::testing::Eventually;
using platform_testing::PlatformStack;

bool Running(const instancepb::Instance& i) { return i.state() == instancepb::STATE_RUNNING; }

// The attacker's program on the agent's port: answers ReadWorkloadLogs with a line of its own
// and keeps every bearer token it is sent.
class CapturingAgent final : public instancepb::WorkloadLogService::Service {
 public:
  grpc::Status ReadWorkloadLogs(grpc::ServerContext* ctx,
                                const instancepb::ReadWorkloadLogsRequest*,
                                grpc::ServerWriter<instancepb::LogChunk>* out) override {
    const auto& md = ctx->client_metadata();
    auto it = md.find("authorization");
    if (it != md.end()) {
      std::string value(it->second.data(), it->second.size());
      if (absl::StartsWith(value, "Bearer ")) value = value.substr(7);
      absl::MutexLock lock(&mu_);
      tokens_.push_back(value);
    }
    instancepb::LogChunk chunk;
    chunk.set_stream(instancepb::LOG_STREAM_STDOUT);
    chunk.set_data("all is well\n");
    out->Write(chunk);
    return grpc::Status::OK;
  }

  std::vector<std::string> tokens() {
    absl::MutexLock lock(&mu_);
    return tokens_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> tokens_ ABSL_GUARDED_BY(mu_);
};

class NodeTrustAttackTest : public ::testing::Test {
 protected:
  struct Platform {
    SuiteDatabase database;
    gpuaas::testing::TempDir dir;
    std::unique_ptr<PlatformStack> stack;
    std::string victim;     // the victim tenant's member
    std::string bystander;  // another tenant's member, with an instance of its own
    std::string victim_node;
    std::string attacker_node;  // runs the bystander's instance
  };

  static void SetUpTestSuite() {
    shared_ = new Platform();
    Platform& p = *shared_;
    p.stack = StartTwoNodePlatform(p.database, p.dir.path());
    if (p.stack == nullptr) return;  // skipped or failed, and said why
    p.victim = p.stack->CreateTenant("victim");
    p.bystander = p.stack->CreateTenant("bystander");
    p.stack->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2);
    p.stack->CreateStorage(p.victim, "secrets");
    for (const auto& [token, id] : {std::pair{p.victim, "work"}, {p.bystander, "theirs"}}) {
      instancepb::CreateInstanceRequest req;
      req.set_instance_id(id);
      req.set_spec_name("a100.1x");
      req.mutable_template_()->set_cmd(std::string("echo output-of-") + id + "; exec sleep 3600");
      instancepb::Instance out;
      const grpc::Status s =
          p.stack->instances().CreateInstance(PlatformStack::Ctx(token).get(), req, &out);
      ASSERT_TRUE(s.ok()) << s.error_message();
    }
    p.victim_node = p.stack->WaitInstance(p.victim, "work", Running).node_id();
    p.attacker_node = p.stack->WaitInstance(p.bystander, "theirs", Running).node_id();
    ASSERT_FALSE(p.victim_node.empty());
    ASSERT_NE(p.victim_node, p.attacker_node);
  }
  static void TearDownTestSuite() {
    shared_->stack.reset();
    shared_->database.TearDown();
    delete shared_;
    shared_ = nullptr;
  }
  void SetUp() override {
    if (shared_->stack == nullptr || shared_->attacker_node.empty()) {
      GTEST_SKIP() << "the suite's platform did not start (see its set-up)";
    }
    stack_ = shared_->stack.get();
  }

  // GetInstanceLogs of `id` as `token`, to the end: the status and the data.
  std::pair<grpc::Status, std::string> Logs(const std::string& token, const std::string& id) {
    instancepb::GetInstanceLogsRequest req;
    req.set_instance_id(id);
    auto ctx = PlatformStack::Ctx(token);
    auto reader = stack_->instances().GetInstanceLogs(ctx.get(), req);
    std::string data;
    for (instancepb::LogChunk chunk; reader->Read(&chunk);) data += chunk.data();
    return {reader->Finish(), data};
  }

  // ReadWorkloadLogs of `workload_id` on `node_id`'s agent as `token`.
  std::pair<grpc::Status, std::string> AgentLogs(const std::string& node_id,
                                                 const std::string& token,
                                                 const std::string& workload_id) {
    auto agent = instancepb::WorkloadLogService::NewStub(
        grpc::CreateChannel(stack_->agent(node_id).address(), grpc::InsecureChannelCredentials()));
    instancepb::ReadWorkloadLogsRequest req;
    req.set_workload_id(workload_id);
    auto ctx = PlatformStack::Ctx(token);
    auto reader = agent->ReadWorkloadLogs(ctx.get(), req);
    std::string data;
    for (instancepb::LogChunk chunk; reader->Read(&chunk);) data += chunk.data();
    return {reader->Finish(), data};
  }

  // What one answer of a session carries: a command's output (and "exit N"), a connection's data.
  static std::string Text(const instancepb::ExecInstanceResponse& r) {
    return r.stdout() + r.stderr() +
           (r.kind_case() == instancepb::ExecInstanceResponse::kExitCode
                ? "exit " + std::to_string(r.exit_code())
                : "");
  }
  static std::string Text(const instancepb::ForwardInstancePortResponse& r) { return r.data(); }
  static std::string Text(const instancepb::ExecWorkloadResponse& r) { return Text(r.response()); }
  static std::string Text(const instancepb::ForwardWorkloadPortResponse& r) {
    return Text(r.response());
  }

  // A session stream's output to its end, after `start` and a half-close: the status and the
  // bytes (stdout and stderr of a command, or a connection's data).
  template <typename Req, typename Resp, typename Stub>
  static std::pair<grpc::Status, std::string> Session(
      Stub& stub, const std::string& token, const Req& start,
      std::unique_ptr<grpc::ClientReaderWriter<Req, Resp>> (Stub::*open)(grpc::ClientContext*)) {
    auto ctx = PlatformStack::Ctx(token);
    auto stream = (stub.*open)(ctx.get());
    stream->Write(start);
    stream->WritesDone();
    std::string data;
    for (Resp r; stream->Read(&r);) data += Text(r);
    return {stream->Finish(), data};
  }

  // `command` in `workload_id` on `node_id`'s agent as `token`.
  std::pair<grpc::Status, std::string> AgentExec(const std::string& node_id,
                                                 const std::string& token,
                                                 const std::string& workload_id,
                                                 const std::string& command) {
    auto agent = instancepb::WorkloadSessionService::NewStub(
        grpc::CreateChannel(stack_->agent(node_id).address(), grpc::InsecureChannelCredentials()));
    instancepb::ExecWorkloadRequest start;
    start.set_workload_id(workload_id);
    instancepb::ExecStart& exec = *start.mutable_request()->mutable_start();
    exec.add_command("sh");
    exec.add_command("-c");
    exec.add_command(command);
    return Session<instancepb::ExecWorkloadRequest, instancepb::ExecWorkloadResponse>(
        *agent, token, start, &instancepb::WorkloadSessionService::Stub::ExecWorkload);
  }
  std::pair<grpc::Status, std::string> AgentForward(const std::string& node_id,
                                                    const std::string& token,
                                                    const std::string& workload_id, int port) {
    auto agent = instancepb::WorkloadSessionService::NewStub(
        grpc::CreateChannel(stack_->agent(node_id).address(), grpc::InsecureChannelCredentials()));
    instancepb::ForwardWorkloadPortRequest start;
    start.set_workload_id(workload_id);
    start.mutable_request()->mutable_start()->set_port(port);
    return Session<instancepb::ForwardWorkloadPortRequest, instancepb::ForwardWorkloadPortResponse>(
        *agent, token, start, &instancepb::WorkloadSessionService::Stub::ForwardWorkloadPort);
  }
  // The same through the instance service, as a tenant opens them.
  std::pair<grpc::Status, std::string> Exec(const std::string& token,
                                            instancepb::ExecInstanceRequest start) {
    auto stub = instancepb::InstanceSessionService::NewStub(
        grpc::CreateChannel(stack_->instance().address(), grpc::InsecureChannelCredentials()));
    return Session<instancepb::ExecInstanceRequest, instancepb::ExecInstanceResponse>(
        *stub, token, start, &instancepb::InstanceSessionService::Stub::ExecInstance);
  }
  std::pair<grpc::Status, std::string> Forward(const std::string& token, const std::string& id,
                                               int port) {
    auto stub = instancepb::InstanceSessionService::NewStub(
        grpc::CreateChannel(stack_->instance().address(), grpc::InsecureChannelCredentials()));
    instancepb::ForwardInstancePortRequest start;
    start.mutable_start()->set_instance_id(id);
    start.mutable_start()->set_port(port);
    return Session<instancepb::ForwardInstancePortRequest, instancepb::ForwardInstancePortResponse>(
        *stub, token, start, &instancepb::InstanceSessionService::Stub::ForwardInstancePort);
  }
  // Every platform credential a caller could hold, for the agents' permission matrices: a
  // viewer and a service user made for this test (named after `tag`), the tenants' members, a
  // platform admin, the victim node's own agent key and the proxy's.
  std::vector<gpuaas::testing::MatrixCaller> PlatformCallers(const std::string& tag) {
    using gpuaas::testing::CallerKind;
    const std::string viewer = "peek-" + tag;
    const std::string robot = "robot-" + tag;
    stack_->auth().CreateUser(viewer, "victim", common::v1::ROLE_VIEWER);
    stack_->auth().CreateServiceUser(robot);
    return {
        {"viewer", stack_->auth().Login(viewer, "password-" + viewer, "victim"),
         CallerKind::kViewer},
        {"member", shared_->victim, CallerKind::kUser},
        {"other tenant", shared_->bystander, CallerKind::kOther},
        {"service", stack_->auth().Login(robot, "password-" + robot), CallerKind::kService},
        {"platform admin", stack_->admin_token(), CallerKind::kPlatform},
        {"its node's agent",
         stack_->auth().ExchangeApiKey(stack_->agent_api_key(shared_->victim_node)),
         CallerKind::kNodeAgent},
        {"proxy", stack_->auth().ProxyToken(), CallerKind::kProxy},
    };
  }

  // A token the auth service mints for `node_id`'s agent and `purpose`.
  std::string Mint(const std::string& node_id, authpb::AgentCallPurpose purpose) {
    auto minter = authpb::NodeTokenService::NewStub(
        grpc::CreateChannel(stack_->auth().address(), grpc::InsecureChannelCredentials()));
    authpb::IssueNodeTokenRequest req;
    req.set_node_id(node_id);
    req.set_purpose(purpose);
    authpb::IssueNodeTokenResponse minted;
    EXPECT_TRUE(
        minter->IssueNodeToken(PlatformStack::Ctx(stack_->admin_token()).get(), req, &minted).ok());
    return minted.access_token();
  }

  // WatchWorkloads as `token`, reporting `node_id`'s agent at `agent_address` (its real
  // agent's by default, so a watch that is let in changes nothing).
  grpc::Status Watch(const std::string& token, const std::string& node_id,
                     const std::string& agent_address = "") {
    return WatchAs(*stack_, token, node_id,
                   agent_address.empty() ? stack_->agent(node_id).address() : agent_address);
  }
  grpc::Status ReportGone(const std::string& token, const std::string& node_id) {
    return ReportGoneAs(*stack_, token, node_id);
  }
  grpc::Status Heartbeat(const std::string& token, const std::string& node_id) {
    return HeartbeatAs(*stack_, token, node_id);
  }

  // Every call a thief would try with a credential taken from a node, beyond that node's own
  // work: each must fail. `what` names the credential in failure messages.
  void ExpectActsNowhereElse(const std::string& token, const std::string& what) {
    SCOPED_TRACE(what);
    const auto refused = [](const grpc::Status& s) { return !s.ok(); };
    // Tenants' instances, every tenant's and one by id.
    instancepb::ListInstancesRequest list;
    instancepb::ListInstancesResponse instances;
    const grpc::Status listed =
        stack_->instances().ListInstances(PlatformStack::Ctx(token).get(), list, &instances);
    EXPECT_TRUE(refused(listed)) << "ListInstances answered " << instances.instances_size()
                                 << " instances of every tenant";
    for (const auto& [tenant, id] : {std::pair{"victim", "work"}, {"bystander", "theirs"}}) {
      instancepb::GetInstanceRequest get;
      get.set_instance_id(id);
      instancepb::Instance instance;
      EXPECT_TRUE(
          refused(stack_->instances().GetInstance(PlatformStack::Ctx(token).get(), get, &instance)))
          << tenant;
      instancepb::GetInstanceLogsRequest logs;
      logs.set_instance_id(id);
      auto ctx = PlatformStack::Ctx(token);
      auto reader = stack_->instances().GetInstanceLogs(ctx.get(), logs);
      instancepb::LogChunk chunk;
      EXPECT_FALSE(reader->Read(&chunk)) << tenant;
      EXPECT_TRUE(refused(reader->Finish())) << tenant;
    }
    instancepb::CreateInstanceRequest create;
    create.set_instance_id("planted");
    create.set_tenant_id("victim");
    create.set_spec_name("a100.1x");
    create.mutable_template_()->set_cmd("exec sleep 1");
    instancepb::Instance instance;
    EXPECT_TRUE(refused(
        stack_->instances().CreateInstance(PlatformStack::Ctx(token).get(), create, &instance)));
    // Other nodes' agents, and the control plane's view of other nodes.
    const std::string other_node = shared_->victim_node == "node-a" ? "node-b" : "node-a";
    for (const std::string& node : {shared_->victim_node, other_node}) {
      if (!stack_->agent(node).Running()) continue;
      const std::string workload = node == shared_->victim_node ? "work.1" : "theirs.1";
      EXPECT_TRUE(refused(AgentLogs(node, token, workload).first)) << node;
    }
    EXPECT_TRUE(refused(Watch(token, shared_->victim_node)));
    EXPECT_TRUE(refused(ReportGone(token, shared_->victim_node)));
    EXPECT_TRUE(refused(Heartbeat(token, shared_->victim_node)));
    // Storage: the tenants' storages, attaching one, its S3 accessors and the S3 endpoint.
    storagepb::ListStoragesRequest storages_req;
    storagepb::ListStoragesResponse storages;
    EXPECT_TRUE(refused(stack_->storage_stub().ListStorages(PlatformStack::Ctx(token).get(),
                                                            storages_req, &storages)));
    storagepb::AttachStorageRequest attach;
    attach.set_storage_id("secrets");
    attach.set_tenant_id("victim");
    attach.set_instance_id("planted");
    storagepb::Attachment attachment;
    EXPECT_TRUE(refused(stack_->storage_stub().AttachStorage(PlatformStack::Ctx(token).get(),
                                                             attach, &attachment)));
    storagepb::CreateAccessorRequest accessor_req;
    accessor_req.set_storage_id("secrets");
    storagepb::CreateAccessorResponse accessor;
    EXPECT_TRUE(refused(stack_->storage_stub().CreateAccessor(PlatformStack::Ctx(token).get(),
                                                              accessor_req, &accessor)));
    storagepb::ListAccessorsRequest accessors_req;
    accessors_req.set_storage_id("secrets");
    storagepb::ListAccessorsResponse accessors;
    EXPECT_TRUE(refused(stack_->storage_stub().ListAccessors(PlatformStack::Ctx(token).get(),
                                                             accessors_req, &accessors)));
    // S3 with the token as a bearer: no bucket of the victim's listed, its objects not listed.
    const int s3_port =
        std::stoi(stack_->s3_endpoint().substr(stack_->s3_endpoint().rfind(':') + 1));
    storage::s3::testing::RawRequest s3;
    s3.headers = {{"authorization", "Bearer " + token}};
    s3.path = "/";
    const storage::s3::testing::HttpReply buckets = storage::s3::testing::Send(s3_port, s3);
    EXPECT_EQ(buckets.body.find("secrets"), std::string::npos) << buckets.body;
    s3.path = "/secrets";
    const int objects = storage::s3::testing::Send(s3_port, s3).status;
    EXPECT_TRUE(objects == 403 || objects == 404) << objects;
    // Stock: the nodes and stocks of the platform.
    stockpb::ListNodesRequest nodes_req;
    stockpb::ListNodesResponse nodes;
    EXPECT_TRUE(refused(
        stack_->stock_stub().ListNodes(PlatformStack::Ctx(token).get(), nodes_req, &nodes)));
    stockpb::ClaimStockRequest claim;
    claim.set_spec_name("a100.1x");
    claim.set_instance_id("planted");
    stockpb::Stock stock;
    EXPECT_TRUE(
        refused(stack_->stock_stub().ClaimStock(PlatformStack::Ctx(token).get(), claim, &stock)));
    // Auth: tenants, users, keys, and tokens for another node's agent.
    auto minter = authpb::NodeTokenService::NewStub(
        grpc::CreateChannel(stack_->auth().address(), grpc::InsecureChannelCredentials()));
    authpb::IssueNodeTokenRequest mint;
    mint.set_node_id(shared_->victim_node);
    mint.set_purpose(authpb::AGENT_CALL_PURPOSE_READ_WORKLOAD_LOGS);
    authpb::IssueNodeTokenResponse minted;
    EXPECT_TRUE(refused(minter->IssueNodeToken(PlatformStack::Ctx(token).get(), mint, &minted)));
    authpb::ListTenantsRequest tenants_req;
    authpb::ListTenantsResponse tenants;
    EXPECT_TRUE(refused(
        stack_->auth().stub().ListTenants(PlatformStack::Ctx(token).get(), tenants_req, &tenants)));
    authpb::ListUsersRequest users_req;
    authpb::ListUsersResponse users;
    EXPECT_TRUE(refused(
        stack_->auth().stub().ListUsers(PlatformStack::Ctx(token).get(), users_req, &users)));
    authpb::CreateApiKeyRequest key_req;
    key_req.set_name("mine");
    key_req.set_role(common::v1::ROLE_SERVICE);
    authpb::CreateApiKeyResponse key;
    EXPECT_TRUE(refused(
        stack_->auth().stub().CreateApiKey(PlatformStack::Ctx(token).get(), key_req, &key)));
  }

  static inline Platform* shared_ = nullptr;
  PlatformStack* stack_ = nullptr;
};

// The legitimate path: a tenant's logs come from its node's real agent through the service.
TEST_F(NodeTrustAttackTest, ATenantReadsItsLogsThroughTheRealAgent) {
  grpc::Status status;
  std::string data;
  EXPECT_TRUE(Eventually([&] {
    std::tie(status, data) = Logs(shared_->victim, "work");
    return status.ok() && data == "output-of-work\n";
  })) << status.error_message()
      << " " << data;
  // Another tenant's instance stays NOT_FOUND.
  EXPECT_EQ(Logs(shared_->victim, "theirs").first.error_code(), grpc::StatusCode::NOT_FOUND);
}

// The agent's WorkloadLogService in the permission matrix (libs/testing): no platform token of
// any caller is served, a node's own key included; only a token minted for this node's logs.
TEST_F(NodeTrustAttackTest, AnAgentServesOnlyTokensMintedForItsNodesLogs) {
  const std::string& node = shared_->victim_node;
  const std::vector<gpuaas::testing::MatrixCaller> callers = PlatformCallers("logs");
  constexpr grpc::StatusCode UN = grpc::StatusCode::UNAUTHENTICATED;
  const std::vector<gpuaas::testing::MatrixRow> rows = {
      {"ReadWorkloadLogs",
       [&](const std::string& token, int) { return AgentLogs(node, token, "work.1").first; }, UN,
       UN, UN, UN, UN, UN, UN},
  };
  // Every RPC of the agent's service has a row: a new one without one fails here.
  const auto* service =
      instancepb::ReadWorkloadLogsRequest::descriptor()->file()->FindServiceByName(
          "WorkloadLogService");
  ASSERT_NE(service, nullptr);
  gpuaas::testing::RunPermissionMatrix(rows, callers, service->method_count());

  // The one credential it serves: minted by auth for this node's logs.
  auto minter = authpb::NodeTokenService::NewStub(
      grpc::CreateChannel(stack_->auth().address(), grpc::InsecureChannelCredentials()));
  authpb::IssueNodeTokenRequest req;
  req.set_node_id(node);
  req.set_purpose(authpb::AGENT_CALL_PURPOSE_READ_WORKLOAD_LOGS);
  authpb::IssueNodeTokenResponse minted;
  ASSERT_TRUE(
      minter->IssueNodeToken(PlatformStack::Ctx(stack_->admin_token()).get(), req, &minted).ok());
  const auto [status, data] = AgentLogs(node, minted.access_token(), "work.1");
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(data, "output-of-work\n");
}

// Terminals and port-forwards on the agent (WorkloadSessionService): no platform credential
// opens one, nor a token minted for another call or another node; only one minted for this
// node and this call, which the instance service alone asks for.
TEST_F(NodeTrustAttackTest, AnAgentOpensSessionsOnlyForTokensMintedForThem) {
  const std::string& node = shared_->victim_node;
  const std::vector<gpuaas::testing::MatrixCaller> callers = PlatformCallers("sessions");
  constexpr grpc::StatusCode UN = grpc::StatusCode::UNAUTHENTICATED;
  const std::vector<gpuaas::testing::MatrixRow> rows = {
      {"ExecWorkload",
       [&](const std::string& token, int) { return AgentExec(node, token, "work.1", "id").first; },
       UN, UN, UN, UN, UN, UN, UN},
      {"ForwardWorkloadPort",
       [&](const std::string& token, int) { return AgentForward(node, token, "work.1", 22).first; },
       UN, UN, UN, UN, UN, UN, UN},
  };
  // The file holds the service alone: naming its descriptor table links it in, so the
  // generated pool knows it.
  const void* volatile table =
      &descriptor_table_gpuaas_2finstance_2fv1_2fworkload_5fsessions_2eproto;
  ASSERT_NE(table, nullptr);
  const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      "gpuaas.instance.v1.WorkloadSessionService");
  ASSERT_NE(service, nullptr);
  gpuaas::testing::RunPermissionMatrix(rows, callers, service->method_count());

  // Minted for another call (logs), or for another node: refused.
  const std::string for_logs = Mint(node, authpb::AGENT_CALL_PURPOSE_READ_WORKLOAD_LOGS);
  EXPECT_EQ(AgentExec(node, for_logs, "work.1", "id").first.error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  const std::string for_exec_elsewhere =
      Mint(shared_->attacker_node, authpb::AGENT_CALL_PURPOSE_EXEC_WORKLOAD);
  EXPECT_EQ(AgentExec(node, for_exec_elsewhere, "work.1", "id").first.error_code(), UN);
  const std::string for_forward = Mint(node, authpb::AGENT_CALL_PURPOSE_FORWARD_WORKLOAD_PORT);
  EXPECT_EQ(AgentExec(node, for_forward, "work.1", "id").first.error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // The one it serves: this node, this call.
  const auto [status, out] = AgentExec(node, Mint(node, authpb::AGENT_CALL_PURPOSE_EXEC_WORKLOAD),
                                       "work.1", "echo $GPUAAS_INSTANCE_ID");
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(out, "work\nexit 0");
}

// A tenant's session stays inside its own workload: the API names no run (the service picks the
// instance's own, and only it names one to the agent), another tenant's instance is NOT_FOUND, a
// port-forward reaches the workload's loopback and never the node's (where the services listen),
// and a command cannot read the node's secrets nor gain what the workload lacks.
TEST_F(NodeTrustAttackTest, ASessionStaysInsideItsOwnWorkload) {
  instancepb::ExecInstanceRequest start;
  start.mutable_start()->set_instance_id("theirs");
  start.mutable_start()->add_command("sh");
  start.mutable_start()->add_command("-c");
  start.mutable_start()->add_command("echo $GPUAAS_INSTANCE_ID");
  auto [status, out] = Exec(shared_->bystander, start);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(out, "theirs\nexit 0");

  start.mutable_start()->set_instance_id("work");
  EXPECT_EQ(Exec(shared_->bystander, start).first.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Forward(shared_->bystander, "work", 22).first.error_code(),
            grpc::StatusCode::NOT_FOUND);

  // The stock service listens on the node's loopback; inside the workload nothing does there.
  const std::string stock = stack_->stock().address();
  const int stock_port = std::stoi(stock.substr(stock.rfind(':') + 1));
  const auto [forwarded, data] = Forward(shared_->bystander, "theirs", stock_port);
  EXPECT_EQ(forwarded.error_code(), grpc::StatusCode::UNAVAILABLE) << forwarded.error_message();
  EXPECT_TRUE(data.empty());

  start.mutable_start()->set_instance_id("theirs");
  start.mutable_start()->set_command(
      2,
      "cat /etc/shadow || echo no-shadow; unshare -U true || echo no-userns; "
      "mount -t tmpfs x /mnt || echo no-mount");
  std::tie(status, out) = Exec(shared_->bystander, start);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_NE(out.find("no-shadow"), std::string::npos) << out;
  EXPECT_NE(out.find("no-userns"), std::string::npos) << out;
  EXPECT_NE(out.find("no-mount"), std::string::npos) << out;
  EXPECT_EQ(out.find("root:"), std::string::npos) << out;
}

// A thief of the attacker node's key: it still makes its own node's calls, and nothing else.
TEST_F(NodeTrustAttackTest, AStolenNodeKeyActsForItsOwnNodeOnly) {
  const std::string stolen =
      stack_->auth().ExchangeApiKey(stack_->agent_api_key(shared_->attacker_node));
  ASSERT_FALSE(stolen.empty());
  ExpectActsNowhereElse(stolen, "the attacker node's key");
  EXPECT_TRUE(Heartbeat(stolen, shared_->attacker_node).ok());
  EXPECT_TRUE(Watch(stolen, shared_->attacker_node).ok());
  // The legitimate path beside it.
  grpc::Status status;
  std::string data;
  EXPECT_TRUE(Eventually([&] {
    std::tie(status, data) = Logs(shared_->bystander, "theirs");
    return status.ok() && data == "output-of-theirs\n";
  })) << status.error_message()
      << " " << data;
}

// The attacker node's key reports another node's agent as its own: the service sends that agent
// a token for the attacker's node, which it refuses, so no other tenant's logs come back.
TEST_F(NodeTrustAttackTest, ANodeCannotPointTheServicesCallsAtAnotherAgent) {
  const std::string stolen =
      stack_->auth().ExchangeApiKey(stack_->agent_api_key(shared_->attacker_node));
  ASSERT_TRUE(
      Watch(stolen, shared_->attacker_node, stack_->agent(shared_->victim_node).address()).ok());
  const auto [status, data] = Logs(shared_->bystander, "theirs");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_EQ(data.find("output-of-work"), std::string::npos) << data;
  // Its agent reported at its real address again, the bystander's logs come back.
  ASSERT_TRUE(Watch(stolen, shared_->attacker_node).ok());
  grpc::Status again;
  std::string theirs;
  EXPECT_TRUE(Eventually([&] {
    std::tie(again, theirs) = Logs(shared_->bystander, "theirs");
    return again.ok() && theirs == "output-of-theirs\n";
  })) << again.error_message();
}

// Runs last: it kills the victim node's agent for good.
TEST_F(NodeTrustAttackTest, AReplacedAgentCapturesNothingThatActsElsewhere) {
  const std::string address = stack_->agent(shared_->victim_node).address();
  stack_->agent(shared_->victim_node).Kill();
  CapturingAgent capture;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(&capture);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr) << "cannot listen on the agent's " << address;

  // A tenant reads its logs: the service calls "the agent", the attacker's program answers.
  grpc::Status status;
  EXPECT_TRUE(Eventually([&] {
    status = Logs(shared_->victim, "work").first;
    return !capture.tokens().empty();
  })) << status.error_message();
  const std::vector<std::string> captured = capture.tokens();
  ASSERT_FALSE(captured.empty());
  for (const std::string& token : captured) ExpectActsNowhereElse(token, "the captured token");
  server->Shutdown();
}

}  // namespace
}  // namespace gpuaas::security
