// gpuaas-stock: wiring only. The shared flags come from the service kit with GPUAAS_STOCK_*
// environment fallbacks; tokens are verified locally against the auth service's JWKS.
#include <CLI/CLI.hpp>
#include <string>

#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/client/channel.h"
#include "libs/common/clock.h"
#include "libs/common/logging.h"
#include "libs/rpc/server.h"
#include "libs/service/service_flags.h"
#include "services/stock/grpc_service.h"
#include "services/stock/migrations.h"
#include "services/stock/specs.h"

namespace {

constexpr gpuaas::service::ServiceIdentity kStock{
    .name = "stock", .grpc_port = 50052, .metrics_port = 9102};

struct StockFlags {
  gpuaas::service::ServiceFlags common;
  std::string auth_addr = "127.0.0.1:50051";
};

void DefineFlags(CLI::App& app, StockFlags& f) {
  gpuaas::service::AddServiceFlags(app, kStock, f.common);
  app.add_option("--auth-addr", f.auth_addr, "the auth service, for the keys that verify tokens")
      ->envname(gpuaas::service::EnvName(kStock.name, "AUTH_ADDR"));
}

int Run(const StockFlags& f) {
  auto log = gpuaas::Logger("stock");
  if (absl::Status s = gpuaas::service::ValidateServiceFlags(f.common); !s.ok()) {
    log->critical("{}", s.ToString());
    return 2;
  }
  // With TLS, the service's own certificate is its client certificate towards auth.
  auto auth_channel = gpuaas::client::OpenChannel(
      f.auth_addr, {.ca_file = f.common.tls.ca_file,
                    .cert_file = f.common.tls.ca_file.empty() ? "" : f.common.tls.cert_file,
                    .key_file = f.common.tls.ca_file.empty() ? "" : f.common.tls.key_file});
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
  gpuaas::stock::SpecCatalog specs(**pool, repo);
  gpuaas::rpc::Server server(
      gpuaas::service::ServerOptionsFor(kStock, f.common),
      gpuaas::authz::NewJwksAuthenticator(gpuaas::authz::NewGrpcJwksSource(*auth_channel), clock));
  gpuaas::stock::StockServiceImpl service(specs, server.handler());
  server.AddService(&service);
  return gpuaas::service::ServeUntilStopped(kStock, server);
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
