// gpuaas-stock: wiring only. The shared flags come from the service kit with GPUAAS_STOCK_*
// environment fallbacks; tokens are verified locally against the auth service's JWKS.
#include <CLI/CLI.hpp>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/common/clock.h"
#include "libs/common/logging.h"
#include "libs/rpc/server.h"
#include "libs/service/service_flags.h"
#include "services/stock/grpc_service.h"
#include "services/stock/migrations.h"
#include "services/stock/nodes.h"
#include "services/stock/specs.h"
#include "services/stock/stocks.h"
#include "services/stock/view_keeper.h"

namespace {

constexpr gpuaas::service::ServiceIdentity kStock{
    .name = "stock", .grpc_port = 50052, .metrics_port = 9102};

struct StockFlags {
  gpuaas::service::ServiceFlags common;
  std::string auth_addr = "127.0.0.1:50051";
  std::string placement_policy = "fgd-pack";
  double heartbeat_interval_seconds = 2;
  double node_timeout_seconds = 10;
};

void DefineFlags(CLI::App& app, StockFlags& f) {
  gpuaas::service::AddServiceFlags(app, kStock, f.common);
  app.add_option("--auth-addr", f.auth_addr, "the auth service, for the keys that verify tokens")
      ->envname(gpuaas::service::EnvName(kStock.name, "AUTH_ADDR"));
  app.add_option("--placement-policy", f.placement_policy,
                 "libs/sched policy that places stocks (fgd-pack learns the workload from the "
                 "specs requested)")
      ->envname(gpuaas::service::EnvName(kStock.name, "PLACEMENT_POLICY"))
      ->capture_default_str();
  app.add_option("--heartbeat-interval-seconds", f.heartbeat_interval_seconds,
                 "how often agents are told to send heartbeats")
      ->envname(gpuaas::service::EnvName(kStock.name, "HEARTBEAT_INTERVAL_SECONDS"))
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  app.add_option("--node-timeout-seconds", f.node_timeout_seconds,
                 "silence after which a node turns NOT_READY and its stocks UNAVAILABLE")
      ->envname(gpuaas::service::EnvName(kStock.name, "NODE_TIMEOUT_SECONDS"))
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
}

int Run(const StockFlags& f) {
  auto log = gpuaas::Logger("stock");
  if (absl::Status s = gpuaas::service::ValidateServiceFlags(f.common); !s.ok()) {
    log->critical("{}", s.ToString());
    return 2;
  }
  auto auth_channel = gpuaas::service::OpenPeerChannel(f.common, f.auth_addr);
  if (!auth_channel.ok()) {
    log->critical("auth channel: {}", auth_channel.status().ToString());
    return 2;
  }
  auto pool = gpuaas::service::OpenDatabase(kStock, f.common, gpuaas::stock::Migrations());
  if (!pool.ok()) {
    log->critical("database: {}", pool.status().ToString());
    return 1;
  }

  gpuaas::SystemClock clock;
  gpuaas::stock::Repository repo;
  auto view = gpuaas::stock::ClusterView::Create({.policy = f.placement_policy});
  if (!view.ok()) {
    log->critical("--placement-policy: {}", view.status().ToString());
    return 2;
  }
  gpuaas::stock::ViewKeeper keeper(**pool, repo, *std::move(view));
  if (absl::Status s = keeper.Load(); !s.ok()) {
    log->critical("loading nodes and stocks: {}", s.ToString());
    return 1;
  }
  const gpuaas::stock::NodeTimings timings{
      .heartbeat_interval = absl::Seconds(f.heartbeat_interval_seconds),
      .node_timeout = absl::Seconds(f.node_timeout_seconds)};
  gpuaas::stock::SpecCatalog specs(**pool, repo);
  gpuaas::stock::StockPool stocks(**pool, repo, keeper, timings.node_timeout);
  gpuaas::stock::NodeInventory nodes(**pool, repo, keeper, timings);
  gpuaas::rpc::Server server(
      gpuaas::service::ServerOptionsFor(kStock, f.common),
      gpuaas::authz::NewJwksAuthenticator(gpuaas::authz::NewGrpcJwksSource(*auth_channel), clock));
  gpuaas::stock::StockServiceImpl stock_service(specs, stocks, nodes, server.handler());
  gpuaas::stock::NodeAgentServiceImpl agent_service(nodes, server.handler());
  server.AddService(&stock_service);
  server.AddService(&agent_service);
  absl::Notification stop;
  std::thread watcher([&] { nodes.WatchHeartbeats(stop); });
  const int code = gpuaas::service::ServeUntilStopped(kStock, server);
  stop.Notify();
  watcher.join();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("gpuaas-stock: GPU specs, warm stock and node inventory");
  StockFlags flags;
  DefineFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(flags.common.log_level);
  return Run(flags);
}
