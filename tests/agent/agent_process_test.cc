// The real gpuaas-agent binary against a real auth service (its API key) and a NodeAgentService
// (tests/agent/fake_stock.h until gpuaas-stock serves it): registration with the node's
// inventory and a service token, heartbeats at the interval the service asks for, coming back
// after the service restarts or forgets the node, quiet retries while the service does not
// implement NodeAgentService, fault injection turning a GPU unhealthy and healthy again, the
// DCGM metrics, NVML through a fake library, and clear failures at start.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/rpc/metrics_scrape_test_util.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/simulated_inventory.h"
#include "tests/agent/fake_stock.h"
#include "tests/auth/auth_stack.h"
#include "tests/common/child_process.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
namespace stockpb = ::gpuaas::stock::v1;
using gpuaas::agent::testing::FakeStock;
using gpuaas::agent::testing::Registration;
using gpuaas::testing::ChildProcess;
using gpuaas::testing::FreePort;
using gpuaas::testing::WaitServing;
using HeartbeatList = std::vector<stockpb::HeartbeatRequest>;
using RegistrationList = std::vector<Registration>;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int CountLines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

using gpuaas::testing::Eventually;

// The agent's /metrics, parsed; empty on failure.
rpc::test::Exposition Scrape(int port) {
  absl::StatusOr<std::string> text = rpc::test::ScrapeMetrics(port);
  if (!text.ok()) {
    return {};
  }
  absl::StatusOr<rpc::test::Exposition> parsed = rpc::test::Exposition::Parse(*text);
  return parsed.ok() ? *parsed : rpc::test::Exposition{};
}

class AgentProcessTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) {
      return;
    }
    auth_ = std::make_unique<auth::testing::AuthStack>(dsn());
    // The dev stack's arrangement: the agent's own key, bound to its node (issue 22).
    api_key_ = auth_->CreateApiKey(auth_->AdminToken(), "agent " + node_id_,
                                   common::v1::ROLE_NODE_AGENT, node_id_);
    ASSERT_FALSE(api_key_.empty());
    key_file_ = dir_.path() / "agent-api-key";
    std::ofstream(key_file_) << api_key_ << "\n";
    chmod(key_file_.c_str(), 0600);
    fault_file_ = dir_.path() / "faults";
    stock_port_ = FreePort();
  }
  void TearDown() override {
    agent_.reset();
    auth_.reset();
    PgTest::TearDown();
  }

  // Starts gpuaas-agent with the test's defaults; each `extra` "--flag=value" replaces the
  // default of that flag or is added; `drop` names a default flag to leave out.
  void StartAgent(std::vector<std::string> extra = {}, const std::string& drop = "") {
    agent_port_ = FreePort();
    metrics_port_ = FreePort();
    std::vector<std::string> argv = {
        GPUAAS_AGENT_BINARY, "--node-id=" + node_id_, "--simulate-gpus=2xA100-80GB,1xT4",
        "--listen=127.0.0.1:" + std::to_string(agent_port_),
        "--metrics-listen=127.0.0.1:" + std::to_string(metrics_port_),
        "--stock-addr=127.0.0.1:" + std::to_string(stock_port_), "--auth-addr=" + auth_->address(),
        "--api-key-file=" + key_file_.string(), "--fault-file=" + fault_file_.string(),
        "--reprobe-interval=300ms", "--sample-interval=50ms", "--labels=zone=test,pool=a",
        "--cpu=24", "--memory=96Gi",
        // No instance service here: no workloads.
        "--instance-addr=none"};
    if (!drop.empty()) {
      std::erase_if(argv, [&](const std::string& a) { return a.rfind(drop + "=", 0) == 0; });
    }
    for (const std::string& e : extra) {
      const std::string name = e.substr(0, e.find('=') + 1);
      auto same = std::find_if(argv.begin(), argv.end(),
                               [&](const std::string& a) { return a.rfind(name, 0) == 0; });
      if (same != argv.end()) {
        *same = e;
      } else {
        argv.push_back(e);
      }
    }
    agent_ = std::make_unique<ChildProcess>(argv, log_file().string());
  }
  fs::path log_file() const { return dir_.path() / "agent.log"; }
  std::string log() const { return ReadAll(log_file()); }
  std::string agent_address() const { return "127.0.0.1:" + std::to_string(agent_port_); }
  // SIGTERM; the agent must stop cleanly.
  void StopAgent() { EXPECT_EQ(agent_->Terminate(), 0) << log(); }

  const std::string node_id_ = "sim-test-1";
  gpuaas::testing::TempDir dir_;
  std::unique_ptr<auth::testing::AuthStack> auth_;
  std::string api_key_;
  fs::path key_file_;
  fs::path fault_file_;
  int stock_port_ = 0;
  int agent_port_ = 0;
  int metrics_port_ = 0;
  std::unique_ptr<ChildProcess> agent_;
};

TEST_F(AgentProcessTest, RegistersWithItsInventoryAndHeartbeats) {
  auto stock = std::make_unique<FakeStock>(stock_port_);
  ASSERT_TRUE(stock->started());
  StartAgent();
  ASSERT_TRUE(WaitServing(agent_address())) << log();
  ASSERT_TRUE(stock->service().WaitFor([](const RegistrationList& r, const HeartbeatList& h) {
    return !r.empty() && h.size() >= 3;
  })) << log();

  const Registration reg = stock->service().registrations().front();
  const stockpb::Node& node = reg.node;
  EXPECT_EQ(node.node_id(), node_id_);
  EXPECT_FALSE(node.hostname().empty());
  EXPECT_EQ(node.cpu(), "24");
  EXPECT_EQ(node.memory(), "96Gi");
  EXPECT_EQ(node.disk(), "3Ti") << "1Ti per simulated GPU";
  EXPECT_EQ(node.labels().at("zone"), "test");
  EXPECT_EQ(node.labels().at("pool"), "a");
  EXPECT_EQ(node.agent_version(), "0.1.0");
  ASSERT_EQ(node.gpus_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(node.gpus(i).uuid(), SimulatedGpuUuid(node_id_, i));
    EXPECT_TRUE(node.gpus(i).healthy());
  }
  EXPECT_EQ(node.gpus(0).model(), "A100-80GB");
  EXPECT_EQ(node.gpus(0).memory_mib(), 81920);
  EXPECT_EQ(node.gpus(2).model(), "T4");

  // The token is the API key's: a node agent's token from auth, bound to this node.
  ASSERT_THAT(reg.authorization, ::testing::StartsWith("Bearer "));
  auth::v1::WhoAmIResponse me;
  grpc::Status who = auth_->stub().WhoAmI(
      auth::testing::AuthStack::Ctx(reg.authorization.substr(7)).get(), {}, &me);
  ASSERT_TRUE(who.ok()) << who.error_message();
  EXPECT_EQ(me.role(), common::v1::ROLE_NODE_AGENT);
  EXPECT_THAT(log(), ::testing::Not(::testing::HasSubstr(reg.authorization.substr(7))))
      << "the token is never logged";

  const stockpb::HeartbeatRequest beat = stock->service().heartbeats().back();
  EXPECT_EQ(beat.node_id(), node_id_);
  ASSERT_EQ(beat.gpus_size(), 3);
  for (const stockpb::GpuMetrics& g : beat.gpus()) {
    EXPECT_GE(g.utilization_percent(), 0);
    EXPECT_LE(g.utilization_percent(), 100);
    EXPECT_GT(g.power_watts(), 0);
    EXPECT_GT(g.temperature_celsius(), 0);
    EXPECT_TRUE(g.healthy());
  }

  // DCGM's names and labels on /metrics.
  rpc::test::Exposition metrics = Scrape(metrics_port_);
  for (const char* name : {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_TEMP",
                           "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_XID_ERRORS"}) {
    EXPECT_EQ(metrics.All(name).size(), 3u) << name;
    EXPECT_EQ(metrics.Type(name), "gauge") << name;
  }
  EXPECT_TRUE(metrics
                  .Value("DCGM_FI_DEV_XID_ERRORS", {{"gpu", "2"},
                                                    {"UUID", SimulatedGpuUuid(node_id_, 2)},
                                                    {"device", "nvidia2"},
                                                    {"modelName", "Tesla T4"},
                                                    {"Hostname", node_id_}})
                  .has_value());
  EXPECT_GE(metrics.Value("gpuaas_agent_heartbeats_total").value_or(0), 3);
  StopAgent();
}

TEST_F(AgentProcessTest, ComesBackAfterTheStockServiceRestartsOrForgetsTheNode) {
  auto stock = std::make_unique<FakeStock>(stock_port_);
  StartAgent();
  ASSERT_TRUE(stock->service().WaitFor([](const RegistrationList& r, const HeartbeatList& h) {
    return !r.empty() && !h.empty();
  })) << log();

  // A restart on the same port: a new service that knows nothing; the agent registers again.
  stock.reset();
  stock = std::make_unique<FakeStock>(stock_port_);
  ASSERT_TRUE(stock->started());
  ASSERT_TRUE(stock->service().WaitFor([](const RegistrationList& r, const HeartbeatList& h) {
    return r.size() == 1 && h.size() >= 2;
  })) << log();

  // The service forgets the node: its stream ends NOT_FOUND and the agent registers again.
  stock->service().Forget(node_id_);
  ASSERT_TRUE(stock->service().WaitFor([](const RegistrationList& r, const HeartbeatList& h) {
    return r.size() == 2;
  })) << log();
  const size_t beats = stock->service().heartbeats().size();
  ASSERT_TRUE(stock->service().WaitFor([beats](const RegistrationList&, const HeartbeatList& h) {
    return h.size() >= beats + 2;
  })) << log();
  EXPECT_TRUE(Eventually([&] {
    return Scrape(metrics_port_).Value("gpuaas_agent_registrations_total").value_or(0) >= 3;
  }));
  StopAgent();
}

TEST_F(AgentProcessTest, RenewsItsTokenBeforeItExpiresWithoutRegisteringAgain) {
  // Auth again on the same database, now with 8-second tokens: renewed after about 6.4 s.
  auth_.reset();
  auth_ = std::make_unique<auth::testing::AuthStack>(
      dsn(), auth::AuthOptions{.access_token_ttl = absl::Seconds(8)});
  auto stock = std::make_unique<FakeStock>(stock_port_);
  StartAgent({"--heartbeat-interval=100ms"});
  ASSERT_TRUE(Eventually([&] { return stock->service().stream_authorizations().size() >= 2; },
                         absl::Seconds(60)))
      << log();
  const std::vector<std::string> tokens = stock->service().stream_authorizations();
  EXPECT_NE(tokens[0], tokens[1]) << "the stream was reopened with a fresh token";
  EXPECT_EQ(stock->service().registrations().size(), 1u) << log();
  const size_t beats = stock->service().heartbeats().size();
  ASSERT_TRUE(stock->service().WaitFor([beats](const RegistrationList&, const HeartbeatList& h) {
    return h.size() >= beats + 2;
  })) << log();
  StopAgent();
}

TEST_F(AgentProcessTest, RetriesQuietlyUntilTheStockServiceImplementsNodeAgentService) {
  auto stock = std::make_unique<FakeStock>(stock_port_, /*implemented=*/false);
  ASSERT_TRUE(stock->started());
  StartAgent();
  ASSERT_TRUE(WaitServing(agent_address())) << log();
  // Dozens of UNIMPLEMENTED answers at the 0.2 s .. 5 s backoff.
  absl::SleepFor(absl::Seconds(2));
  EXPECT_TRUE(agent_->Running());
  EXPECT_EQ(Scrape(metrics_port_).Value("gpuaas_agent_stock_connected"), 0);
  // One line per change of state, not one per retry.
  EXPECT_LE(CountLines(log()), 8) << log();

  stock.reset();
  stock = std::make_unique<FakeStock>(stock_port_);
  ASSERT_TRUE(stock->service().WaitFor([](const RegistrationList& r, const HeartbeatList& h) {
    return !r.empty() && !h.empty();
  })) << log();
  EXPECT_TRUE(
      Eventually([&] { return Scrape(metrics_port_).Value("gpuaas_agent_stock_connected") == 1; }));
  StopAgent();
}

TEST_F(AgentProcessTest, AFaultyGpuTurnsUnhealthyAndComesBack) {
  auto stock = std::make_unique<FakeStock>(stock_port_);
  StartAgent({"--heartbeat-interval=100ms"});
  ASSERT_TRUE(stock->service().WaitFor([](const RegistrationList& r, const HeartbeatList& h) {
    return !r.empty() && !h.empty();
  })) << log();

  std::ofstream(fault_file_) << "1 79\n" << SimulatedGpuUuid(node_id_, 0) << " 13\n";
  auto gpu_is = [](int index, bool healthy, int xid) {
    return [=](const RegistrationList&, const HeartbeatList& h) {
      return !h.empty() && h.back().gpus(index).healthy() == healthy &&
             h.back().gpus(index).last_xid() == xid;
    };
  };
  ASSERT_TRUE(stock->service().WaitFor(gpu_is(1, false, 79))) << log();
  const stockpb::HeartbeatRequest faulty = stock->service().heartbeats().back();
  EXPECT_TRUE(faulty.gpus(0).healthy()) << "XID 13 is the application's";
  EXPECT_EQ(faulty.gpus(0).last_xid(), 13);
  EXPECT_TRUE(faulty.gpus(2).healthy());
  rpc::test::Exposition metrics = Scrape(metrics_port_);
  EXPECT_EQ(metrics.Value("DCGM_FI_DEV_XID_ERRORS", {{"gpu", "1"},
                                                     {"UUID", SimulatedGpuUuid(node_id_, 1)},
                                                     {"device", "nvidia1"},
                                                     {"modelName", "NVIDIA A100-SXM4-80GB"},
                                                     {"Hostname", node_id_}}),
            79);
  // Every XID counts, the repeated ones too (the fault file raises its XIDs each poll).
  EXPECT_EQ(metrics.Type("gpuaas_agent_gpu_xid_errors_total"), "counter");
  EXPECT_GE(
      metrics
          .Value("gpuaas_agent_gpu_xid_errors_total", {{"gpu", "1"},
                                                       {"UUID", SimulatedGpuUuid(node_id_, 1)},
                                                       {"device", "nvidia1"},
                                                       {"modelName", "NVIDIA A100-SXM4-80GB"},
                                                       {"Hostname", node_id_}})
          .value_or(0),
      1);
  EXPECT_EQ(
      metrics
          .Value("gpuaas_agent_gpu_xid_errors_total", {{"gpu", "2"},
                                                       {"UUID", SimulatedGpuUuid(node_id_, 2)},
                                                       {"device", "nvidia2"},
                                                       {"modelName", "Tesla T4"},
                                                       {"Hostname", node_id_}})
          .value_or(-1),
      0);

  // Repaired: the line goes, and the next re-probe brings the GPU back.
  std::ofstream(fault_file_, std::ios::trunc) << "";
  ASSERT_TRUE(stock->service().WaitFor(gpu_is(1, true, 79))) << log();
  StopAgent();
}

TEST_F(AgentProcessTest, ARefusedApiKeyKeepsTheAgentUpAndUnregistered) {
  auto stock = std::make_unique<FakeStock>(stock_port_);
  std::ofstream(key_file_, std::ios::trunc) << "gak_nosuchkey.nosecret\n";
  StartAgent();
  ASSERT_TRUE(WaitServing(agent_address())) << log();
  absl::SleepFor(absl::Seconds(1));
  EXPECT_TRUE(agent_->Running());
  EXPECT_TRUE(stock->service().registrations().empty());
  EXPECT_LE(CountLines(log()), 8) << log();
  StopAgent();
}

TEST_F(AgentProcessTest, ReadsGpusThroughNvml) {
  auto stock = std::make_unique<FakeStock>(stock_port_);
  StartAgent({"--nvml-library=" GPUAAS_FAKE_NVML}, "--simulate-gpus");
  ASSERT_TRUE(stock->service().WaitFor([](const RegistrationList& r, const HeartbeatList& h) {
    return !r.empty() && !h.empty();
  })) << log();
  const stockpb::Node node = stock->service().registrations().front().node;
  ASSERT_EQ(node.gpus_size(), 2);
  EXPECT_EQ(node.gpus(0).uuid(), "GPU-fa4e0000-0000-4000-8000-000000000000");
  EXPECT_EQ(node.gpus(0).model(), "A100-80GB");
  EXPECT_TRUE(node.gpus(0).mig_enabled());
  EXPECT_EQ(node.gpus(1).model(), "T4");
  EXPECT_EQ(stock->service().heartbeats().back().gpus(0).utilization_percent(), 87);
  StopAgent();
}

TEST_F(AgentProcessTest, AMissingNvmlLibraryIsAClearErrorAtStart) {
  StartAgent({"--nvml-library=/nonexistent/libnvidia-ml.so.1"}, "--simulate-gpus");
  ASSERT_TRUE(Eventually([&] { return !agent_->Running(); })) << log();
  EXPECT_EQ(agent_->Terminate(), 1) << "an error exit, not a crash\n" << log();
  EXPECT_THAT(log(), ::testing::HasSubstr("/nonexistent/libnvidia-ml.so.1"));
}

TEST_F(AgentProcessTest, BadFlagsStopTheAgentAtStart) {
  for (const std::string& bad :
       {std::string("--simulate-gpus=0xT4"), std::string("--simulate-gpus=8xNOPE"),
        std::string("--cpu=1Ki"), std::string("--labels=novalue"),
        std::string("--reprobe-interval=soon")}) {
    StartAgent({bad});
    ASSERT_TRUE(Eventually([&] { return !agent_->Running(); })) << bad;
    EXPECT_EQ(agent_->Terminate(), 2) << bad << "\n" << log();
  }
}

}  // namespace
}  // namespace gpuaas::agent
