// gpuaas-stock: flags only; services/stock/app.h wires the service. The shared flags come from
// the service kit with GPUAAS_STOCK_* environment fallbacks; tokens are verified locally
// against the auth service's JWKS.
#include <CLI/CLI.hpp>

#include "libs/common/logging.h"
#include "libs/service/env_options.h"
#include "libs/service/run_app.h"
#include "services/stock/app.h"

int main(int argc, char** argv) {
  using gpuaas::stock::StockApp;
  CLI::App app("gpuaas-stock: GPU specs, warm stock and node inventory");
  gpuaas::stock::StockAppOptions f;
  gpuaas::service::EnvOptions options(app, "stock");
  gpuaas::service::AddServiceFlags(app, StockApp::kIdentity, f.common);
  options.Add("--auth-addr", f.auth_addr, "the auth service, for the keys that verify tokens");
  options.Add("--placement-policy", f.placement_policy,
              "libs/sched policy that places stocks (fgd-pack learns the workload from the "
              "specs requested)");
  options
      .Add("--heartbeat-interval-seconds", f.heartbeat_interval_seconds,
           "how often agents are told to send heartbeats")
      ->check(CLI::Range(0.05, 3600.0));
  options
      .Add("--node-timeout-seconds", f.node_timeout_seconds,
           "silence after which a node turns NOT_READY and its stocks UNAVAILABLE (counted "
           "from the service's start at the earliest, so a restart loses no node)")
      ->check(CLI::Range(0.1, 86400.0));
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(f.common.log_level);
  return gpuaas::service::RunApp<StockApp>(f);
}
