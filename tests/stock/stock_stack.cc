#include "tests/stock/stock_stack.h"

#include <gtest/gtest.h>

#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/client/channel.h"
#include "libs/testing/status_matchers.h"
#include "services/stock/migrations.h"

namespace gpuaas::stock::testing {

StockStack::StockStack(const std::string& dsn, const std::string& auth_address,
                       StockStackOptions options) {
  auto pool = db::Pool::Create({.dsn = dsn, .size = 8});
  EXPECT_TRUE(pool.ok()) << pool.status();
  pool_ = *std::move(pool);
  EXPECT_OK(db::Migrate(*pool_, "stock", Migrations()));
  auto view = ClusterView::Create({.policy = options.policy});
  EXPECT_TRUE(view.ok()) << view.status();
  keeper_ = std::make_unique<ViewKeeper>(*pool_, repo_, *std::move(view));
  EXPECT_OK(keeper_->Load());
  specs_ = std::make_unique<SpecCatalog>(*pool_, repo_);
  stocks_ = std::make_unique<StockPool>(*pool_, repo_, *keeper_, options.timings.node_timeout);
  nodes_ = std::make_unique<NodeInventory>(*pool_, repo_, *keeper_, options.timings);
  auto auth_channel = client::OpenChannel(auth_address, {});
  EXPECT_TRUE(auth_channel.ok());
  server_ = std::make_unique<rpc::Server>(
      rpc::ServerOptions{.name = "stock",
                         .listen_address = "127.0.0.1:0",
                         .metrics_address = "",
                         .worker_threads = 8},
      authz::NewJwksAuthenticator(authz::NewGrpcJwksSource(*auth_channel), clock_));
  service_ = std::make_unique<StockServiceImpl>(*specs_, *stocks_, *nodes_, server_->handler());
  agent_service_ = std::make_unique<NodeAgentServiceImpl>(*nodes_, server_->handler());
  server_->AddService(service_.get());
  server_->AddService(agent_service_.get());
  EXPECT_OK(server_->Start());
  auto channel = *client::OpenChannel(address(), {});
  stub_ = pb::StockService::NewStub(channel);
  agent_stub_ = pb::NodeAgentService::NewStub(channel);
  if (options.watch_heartbeats) heartbeat_watch_ = nodes_->StartHeartbeatWatch();
}

StockStack::~StockStack() {
  heartbeat_watch_.reset();
  server_->Shutdown();
}

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
