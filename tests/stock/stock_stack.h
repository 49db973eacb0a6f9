// An in-process stock service (every RPC, both gRPC services) on the test's database, verifying
// tokens against an in-process auth service, plus helpers that register simulated nodes through
// the real NodeAgentService. Two StockStacks on one database are two replicas.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "services/stock/app.h"

namespace gpuaas::stock::testing {

struct StockStackOptions {
  std::string policy = "fgd-pack";
  NodeTimings timings{.heartbeat_interval = absl::Seconds(1), .node_timeout = absl::Seconds(60)};
  // Run the NOT_READY monitor as gpuaas-stock does (tests that call MarkLostNodes themselves
  // leave it off).
  bool watch_heartbeats = false;
};

class StockStack final {
 public:
  // gpuaas-stock's wiring (StockApp) on `dsn`, serving on a free loopback port. Fails the test
  // (EXPECT) when it does not start.
  StockStack(const std::string& dsn, const std::string& auth_address,
             StockStackOptions options = {});
  ~StockStack();

  pb::StockService::Stub& stub() { return *stub_; }
  pb::NodeAgentService::Stub& agent_stub() { return *agent_stub_; }
  NodeInventory& nodes() { return app_->nodes(); }
  ViewKeeper& keeper() { return app_->keeper(); }
  db::Pool& pool() { return app_->pool(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(app_->port()); }

 private:
  std::unique_ptr<StockApp> app_;
  std::unique_ptr<pb::StockService::Stub> stub_;
  std::unique_ptr<pb::NodeAgentService::Stub> agent_stub_;
};

// A node as an agent with simulated GPUs registers it: `gpus` × `model`, UUIDs
// "GPU-<node_id>-<index>", and the given host capacity.
pb::Node SimulatedNode(const std::string& node_id, int gpus, const std::string& model,
                       const std::string& cpu = "128", const std::string& memory = "1Ti",
                       const std::string& disk = "8Ti");

// A spec of `gpu_num` whole GPUs of `model` (or a share / MIG profile when given).
pb::Spec MakeSpec(const std::string& name, const std::string& model, int gpu_num,
                  const std::string& cpu = "8", const std::string& memory = "32Gi",
                  const std::string& disk = "100Gi", int share_milli = 0,
                  const std::string& mig_profile = "");

}  // namespace gpuaas::stock::testing
