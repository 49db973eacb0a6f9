#include "tests/stock/stock_stack.h"

#include <gtest/gtest.h>

#include "libs/client/channel.h"
#include "libs/testing/service_dsn.h"
#include "libs/testing/status_matchers.h"
#include "tests/common/loopback_flags.h"

namespace gpuaas::stock::testing {

StockStack::StockStack(const std::string& dsn, const std::string& auth_address,
                       StockStackOptions options) {
  absl::StatusOr<std::unique_ptr<StockApp>> app = StockApp::Create(
      {.common = gpuaas::testing::LoopbackServiceFlags(gpuaas::testing::ServiceDsn(dsn, "stock")),
       .auth_addr = auth_address,
       .placement_policy = options.policy,
       .heartbeat_interval_seconds = absl::ToDoubleSeconds(options.timings.heartbeat_interval),
       .node_timeout_seconds = absl::ToDoubleSeconds(options.timings.node_timeout),
       .watch_heartbeats = options.watch_heartbeats});
  EXPECT_TRUE(app.ok()) << app.status();
  if (!app.ok()) return;
  app_ = *std::move(app);
  EXPECT_OK(app_->Start());
  auto channel = *client::OpenChannel(address(), {});
  stub_ = pb::StockService::NewStub(channel);
  agent_stub_ = pb::NodeAgentService::NewStub(channel);
}

StockStack::~StockStack() = default;

pb::Node SimulatedNode(const std::string& node_id, int gpus, const std::string& model,
                       const std::string& cpu, const std::string& memory, const std::string& disk) {
  pb::Node n;
  n.set_node_id(node_id);
  n.set_hostname(node_id);
  n.set_cpu(cpu);
  n.set_memory(memory);
  n.set_disk(disk);
  n.set_agent_version("test");
  for (int i = 0; i < gpus; ++i) {
    pb::Gpu* g = n.add_gpus();
    g->set_uuid("GPU-" + node_id + "-" + std::to_string(i));
    g->set_model(model);
    g->set_memory_mib(81920);
    g->set_healthy(true);
  }
  return n;
}

pb::Spec MakeSpec(const std::string& name, const std::string& model, int gpu_num,
                  const std::string& cpu, const std::string& memory, const std::string& disk,
                  int share_milli, const std::string& mig_profile) {
  pb::Spec s;
  s.set_spec_name(name);
  s.set_gpu_type(model);
  s.set_gpu_num(gpu_num);
  s.set_cpu(cpu);
  s.set_memory(memory);
  s.set_disk(disk);
  s.set_gpu_share_milli(share_milli);
  s.set_mig_profile(mig_profile);
  s.mutable_price()->set_micros_per_hour(1'000'000);
  s.mutable_price()->set_currency("USD");
  return s;
}

}  // namespace gpuaas::stock::testing
