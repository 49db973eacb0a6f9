// gpuaas-stock: flags only; services/stock/app.h wires the service. The shared flags come from
// the service kit with GPUAAS_STOCK_* environment fallbacks; tokens are verified locally
// against the auth service's JWKS.
#include <CLI/CLI.hpp>

#include "libs/common/logging.h"
#include "libs/service/run_app.h"
#include "services/stock/app.h"

int main(int argc, char** argv) {
  using gpuaas::stock::StockApp;
  CLI::App app("gpuaas-stock: GPU specs, warm stock and node inventory");
  gpuaas::stock::StockAppOptions f;
  auto env = [](std::string_view flag) { return gpuaas::service::EnvName("stock", flag); };
  gpuaas::service::AddServiceFlags(app, StockApp::kIdentity, f.common);
  app.add_option("--auth-addr", f.auth_addr, "the auth service, for the keys that verify tokens")
      ->envname(env("AUTH_ADDR"));
  app.add_option("--placement-policy", f.placement_policy,
                 "libs/sched policy that places stocks (fgd-pack learns the workload from the "
                 "specs requested)")
      ->envname(env("PLACEMENT_POLICY"))
      ->capture_default_str();
  app.add_option("--heartbeat-interval-seconds", f.heartbeat_interval_seconds,
                 "how often agents are told to send heartbeats")
      ->envname(env("HEARTBEAT_INTERVAL_SECONDS"))
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  app.add_option("--node-timeout-seconds", f.node_timeout_seconds,
                 "silence after which a node turns NOT_READY and its stocks UNAVAILABLE")
      ->envname(env("NODE_TIMEOUT_SECONDS"))
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(f.common.log_level);
  return gpuaas::service::RunApp<StockApp>(f);
}
