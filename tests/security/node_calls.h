// The node calls an attacker with a node's credential tries (machine_attack_test,
// node_trust_attack_test), made as an agent makes them: over real gRPC to the stock and instance
// services of a PlatformStack, with the token given. And the suites' shared platform.
#pragma once

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <memory>
#include <string>

#include "libs/testing/pg_test.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::security {

// PgTest's per-test database, made once for a suite (SetUpTestSuite).
class SuiteDatabase final : public gpuaas::testing::PgTest {
 public:
  void TestBody() override {}
  using PgTest::dsn;
  using PgTest::SetUp;
  using PgTest::TearDown;
};

// The suites' platform: two agents with one A100 each, node-a and node-b, on `database` (set up
// here) with its files under `dir`; null when the database is skipped or failed (it said why).
inline std::unique_ptr<platform_testing::PlatformStack> StartTwoNodePlatform(
    SuiteDatabase& database, const std::filesystem::path& dir) {
  database.SetUp();
  if (database.dsn().empty()) return nullptr;
  platform_testing::PlatformOptions options;
  options.agents = {{"node-a", "1xA100-80GB"}, {"node-b", "1xA100-80GB"}};
  return std::make_unique<platform_testing::PlatformStack>(database.dsn(), dir, options);
}

// WatchWorkloads for `node_id` with `token`, the agent reported at `agent_address`: how it
// ends, or OK once a set arrived (then the stream is cancelled).
inline grpc::Status WatchAs(platform_testing::PlatformStack& stack, const std::string& token,
                            const std::string& node_id, const std::string& agent_address = "") {
  ::gpuaas::instance::v1::WatchWorkloadsRequest r;
  r.set_node_id(node_id);
  r.set_address("127.0.0.1");
  r.set_agent_address(agent_address);
  auto ctx = platform_testing::PlatformStack::Ctx(token);
  auto reader = stack.node_workloads().WatchWorkloads(ctx.get(), r);
  ::gpuaas::instance::v1::WorkloadSet set;
  if (reader->Read(&set)) {
    ctx->TryCancel();
    reader->Finish();
    return grpc::Status::OK;
  }
  return reader->Finish();
}

// ReportWorkloads for `node_id` saying nothing runs there: every workload of the node would be
// marked gone.
inline grpc::Status ReportGoneAs(platform_testing::PlatformStack& stack, const std::string& token,
                                 const std::string& node_id) {
  ::gpuaas::instance::v1::ReportWorkloadsRequest r;
  r.set_node_id(node_id);
  r.set_complete(true);
  ::gpuaas::instance::v1::ReportWorkloadsResponse out;
  return stack.node_workloads().ReportWorkloads(platform_testing::PlatformStack::Ctx(token).get(),
                                                r, &out);
}

// One heartbeat for `node_id` on the stock service's NodeAgentService: how the stream ended.
inline grpc::Status HeartbeatAs(platform_testing::PlatformStack& stack, const std::string& token,
                                const std::string& node_id) {
  auto stub = ::gpuaas::stock::v1::NodeAgentService::NewStub(
      grpc::CreateChannel(stack.stock().address(), grpc::InsecureChannelCredentials()));
  auto ctx = platform_testing::PlatformStack::Ctx(token);
  auto stream = stub->Heartbeat(ctx.get());
  ::gpuaas::stock::v1::HeartbeatRequest r;
  r.set_node_id(node_id);
  stream->Write(r);
  stream->WritesDone();
  ::gpuaas::stock::v1::HeartbeatResponse out;
  while (stream->Read(&out)) {
  }
  return stream->Finish();
}

}  // namespace gpuaas::security
