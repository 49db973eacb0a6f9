// The stock service with real gpuaas-agent processes (simulated GPUs): agents register and keep
// their nodes READY with heartbeats; an agent that stops turns its node NOT_READY within the
// timeout and claims skip its stocks until it is back; a hardware XID injected through the fault
// file takes its GPU's stock out of the pool until the agent's re-probe finds the GPU well.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "libs/testing/eventually.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/child_process.h"
#include "tests/stock/stock_test_base.h"

namespace gpuaas::stock::testing {
namespace {

namespace fs = std::filesystem;
using gpuaas::testing::ChildProcess;
using gpuaas::testing::FreePort;

using gpuaas::testing::Eventually;

class StockAgentTest : public StockTest {
 protected:
  StockStackOptions Options() override {
    return {.timings = {.heartbeat_interval = absl::Milliseconds(200),
                        .node_timeout = absl::Seconds(2)},
            .watch_heartbeats = true};
  }
  void TearDown() override {
    agents_.clear();
    StockTest::TearDown();
  }

  // Each agent with its own key, bound to its node (issue 22).
  void StartAgent(const std::string& node_id, const std::string& gpus) {
    const fs::path key_file = dir_.path() / (node_id + "-api-key");
    std::ofstream(key_file) << stack_->CreateApiKey(admin_, "agent " + node_id,
                                                    common::v1::ROLE_NODE_AGENT, node_id)
                            << "\n";
    chmod(key_file.c_str(), 0600);
    const std::string port = std::to_string(FreePort());
    agents_[node_id] = std::make_unique<ChildProcess>(
        std::vector<std::string>{
            GPUAAS_AGENT_BINARY, "--node-id=" + node_id, "--simulate-gpus=" + gpus,
            "--listen=127.0.0.1:" + port,
            "--metrics-listen=127.0.0.1:" + std::to_string(FreePort()),
            "--stock-addr=" + stock_->address(), "--auth-addr=" + stack_->address(),
            "--api-key-file=" + key_file.string(), "--fault-file=" + FaultFile(node_id).string(),
            "--instance-addr=none", "--reprobe-interval=300ms", "--sample-interval=100ms"},
        (dir_.path() / (node_id + ".log")).string());
  }
  fs::path FaultFile(const std::string& node_id) { return dir_.path() / (node_id + ".faults"); }

  pb::Node GetNode(const std::string& node_id) {
    pb::GetNodeRequest req;
    req.set_node_id(node_id);
    pb::Node node;
    (void)stock_->stub().GetNode(Ctx(admin_).get(), req, &node);
    return node;
  }
  bool Ready(const std::string& node_id) {
    return GetNode(node_id).state() == pb::NODE_STATE_READY;
  }

  gpuaas::testing::TempDir dir_;
  std::map<std::string, std::unique_ptr<ChildProcess>> agents_;
};

TEST_F(StockAgentTest, AgentsKeepNodesReadyAndStoppedOnesLoseTheirStocks) {
  StartAgent("sim-a100-1", "2xA100-80GB");
  StartAgent("sim-t4-1", "1xT4");
  ASSERT_TRUE(Eventually([&] { return Ready("sim-a100-1") && Ready("sim-t4-1"); }));
  ASSERT_TRUE(Eventually([&] { return GetNode("sim-a100-1").gpus(0).temperature_celsius() > 0; }))
      << "heartbeats carry the GPUs' readings";
  const pb::Node a100 = GetNode("sim-a100-1");
  ASSERT_EQ(a100.gpus_size(), 2);
  EXPECT_EQ(a100.gpus(0).model(), "A100-80GB");

  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 2, nullptr).ok());
  EXPECT_EQ(Summary("a100.1x").available(), 2);

  // The agent stops: within the timeout its node is NOT_READY and claims skip its stocks.
  EXPECT_EQ(agents_["sim-a100-1"]->Terminate(), 0);
  ASSERT_TRUE(Eventually([&] { return !Ready("sim-a100-1"); }, absl::Seconds(10)));
  EXPECT_EQ(Summary("a100.1x").unavailable(), 2);
  EXPECT_EQ(Claim("a100.1x", "ins-1", nullptr).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(Ready("sim-t4-1")) << "the other agent's node is untouched";

  // It comes back: so do its stocks.
  StartAgent("sim-a100-1", "2xA100-80GB");
  ASSERT_TRUE(Eventually([&] { return Summary("a100.1x").available() == 2; }));
  EXPECT_TRUE(Claim("a100.1x", "ins-1", nullptr).ok());
}

TEST_F(StockAgentTest, HardwareXidTakesAGpuOutUntilItsReprobePasses) {
  StartAgent("sim-a100-1", "2xA100-80GB");
  ASSERT_TRUE(Eventually([&] { return Ready("sim-a100-1"); }));
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateStocks("a100.1x", 2, nullptr).ok());

  std::ofstream(FaultFile("sim-a100-1")) << "0 79\n";  // GPU 0 fell off the bus
  ASSERT_TRUE(Eventually([&] { return Summary("a100.1x").unavailable() == 1; }));
  EXPECT_FALSE(GetNode("sim-a100-1").gpus(0).healthy());
  EXPECT_EQ(GetNode("sim-a100-1").gpus(0).last_xid(), 79);
  pb::Stock claimed;
  ASSERT_TRUE(Claim("a100.1x", "ins-1", &claimed).ok());
  EXPECT_EQ(claimed.gpu_uuids(0), GetNode("sim-a100-1").gpus(1).uuid());

  std::ofstream(FaultFile("sim-a100-1")) << "0 13\n";  // an application XID: harmless
  fs::remove(FaultFile("sim-a100-1"));
  ASSERT_TRUE(Eventually([&] { return Summary("a100.1x").available() == 1; }))
      << "the re-probe brings the GPU back";
  EXPECT_TRUE(GetNode("sim-a100-1").gpus(0).healthy());
}

}  // namespace
}  // namespace gpuaas::stock::testing
