// gpuaas-instance: wiring only. The API (InstanceService, ImageService) writes what users ask
// for; the back half (BackHalf: the reconciler and NodeWorkloadService) gets instances there.
// Tokens are verified locally against the auth service's JWKS; specs, storages and quotas are
// read with each caller's own token (specs and quotas kept --lookup-cache-seconds per replica),
// and the reconciler calls stock and storage with the service's API key. Every flag has a
// GPUAAS_INSTANCE_* environment fallback.
#include <CLI/CLI.hpp>
#include <string>

#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/client/auth_client.h"
#include "libs/client/stock_client.h"
#include "libs/client/storage_client.h"
#include "libs/common/clock.h"
#include "libs/common/logging.h"
#include "libs/rpc/server.h"
#include "libs/service/service_flags.h"
#include "services/instance/grpc_service.h"
#include "services/instance/instance_watches.h"
#include "services/instance/instances.h"
#include "services/instance/migrations.h"
#include "services/instance/reconciler_wiring.h"

namespace {

constexpr gpuaas::service::ServiceIdentity kInstance{
    .name = "instance", .grpc_port = 50054, .metrics_port = 9104};

struct InstanceFlags {
  gpuaas::service::ServiceFlags common;
  std::string auth_addr = "127.0.0.1:50051";
  double lookup_cache_seconds = 2;
  std::string access_domain = "gpuaas.localhost:8080";
  std::string access_scheme = "http";
  double access_code_ttl_seconds = 60;
  gpuaas::instance::BackHalfFlags back;
};

int Run(const InstanceFlags& f) {
  auto log = gpuaas::Logger("instance");
  if (absl::Status s = gpuaas::service::ValidateServiceFlags(f.common); !s.ok()) {
    log->critical("{}", s.ToString());
    return 2;
  }
  auto auth_channel = gpuaas::service::OpenPeerChannel(f.common, f.auth_addr);
  auto stock_channel = gpuaas::service::OpenPeerChannel(f.common, f.back.stock_addr);
  auto storage_channel = gpuaas::service::OpenPeerChannel(f.common, f.back.storage_addr);
  for (const absl::Status& s :
       {auth_channel.status(), stock_channel.status(), storage_channel.status()}) {
    if (!s.ok()) {
      log->critical("peer channel: {}", s.ToString());
      return 2;
    }
  }
  auto pool = gpuaas::service::OpenDatabase(kInstance, f.common, gpuaas::instance::Migrations());
  if (!pool.ok()) {
    log->critical("database: {}", pool.status().ToString());
    return 1;
  }

  gpuaas::SystemClock clock;
  gpuaas::rpc::Server server(
      gpuaas::service::ServerOptionsFor(kInstance, f.common),
      gpuaas::authz::NewJwksAuthenticator(gpuaas::authz::NewGrpcJwksSource(*auth_channel), clock));
  auto back =
      gpuaas::instance::BackHalf::Create(f.back, f.common, **pool, *auth_channel, server.handler());
  if (!back.ok()) {
    log->critical("{}", back.status().ToString());
    return 2;
  }
  gpuaas::client::AuthClient auth(*auth_channel, absl::Seconds(2));
  gpuaas::client::StockClient stock(*stock_channel, absl::Seconds(2));
  gpuaas::client::StorageClient storage(*storage_channel, absl::Seconds(2));
  gpuaas::instance::Instances instances(
      **pool, {auth, stock, storage}, [&back] { (*back)->reconciler().Kick(); },
      {.lookup_cache_ttl = absl::Seconds(f.lookup_cache_seconds)});
  gpuaas::instance::InstanceWatches watches(**pool, f.common.db_dsn);
  gpuaas::instance::Access access(**pool, {.domain = f.access_domain,
                                           .scheme = f.access_scheme,
                                           .code_ttl = absl::Seconds(f.access_code_ttl_seconds)});
  gpuaas::instance::InstanceMetricsReader metrics(**pool, stock);
  gpuaas::instance::InstanceServiceImpl instance_service(instances, watches, access, metrics,
                                                         server.handler());
  gpuaas::instance::ImageServiceImpl image_service(instances, server.handler());
  gpuaas::instance::AccessServiceImpl access_service(access, server.handler());
  server.AddService(&instance_service);
  server.AddService(&image_service);
  server.AddService(&access_service);
  server.AddService((*back)->node_workload_service());

  watches.Start();
  (*back)->Start();
  const int code = gpuaas::service::ServeUntilStopped(kInstance, server);
  (*back)->Stop();
  watches.Stop();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "gpuaas-instance: GPU instances (create, start, stop, delete, watch, usage), the image "
      "catalog, the reconciler that runs them on stocks, and the agents' workload sets");
  InstanceFlags flags;
  gpuaas::service::AddServiceFlags(app, kInstance, flags.common);
  app.add_option("--auth-addr", flags.auth_addr,
                 "the auth service: the keys that verify tokens, and tenants' quotas")
      ->envname(gpuaas::service::EnvName(kInstance.name, "AUTH_ADDR"))
      ->capture_default_str();
  app.add_option("--lookup-cache-seconds", flags.lookup_cache_seconds,
                 "how long a spec or a tenant's quota read for a create serves this replica's "
                 "next creates (so a quota lowered takes this long to bind them); 0: read both "
                 "for every create")
      ->envname(gpuaas::service::EnvName(kInstance.name, "LOOKUP_CACHE_SECONDS"))
      ->check(CLI::Range(0.0, 60.0))
      ->capture_default_str();
  app.add_option("--access-domain", flags.access_domain,
                 "the access proxy's domain in access URLs (<instance>-<port>.<domain>), with "
                 "its port unless the scheme's default")
      ->envname(gpuaas::service::EnvName(kInstance.name, "ACCESS_DOMAIN"))
      ->capture_default_str();
  app.add_option("--access-scheme", flags.access_scheme,
                 "http, or https when the access proxy serves TLS")
      ->envname(gpuaas::service::EnvName(kInstance.name, "ACCESS_SCHEME"))
      ->check(CLI::IsMember({"http", "https"}))
      ->capture_default_str();
  app.add_option("--access-code-ttl", flags.access_code_ttl_seconds,
                 "seconds a one-time access link stays usable")
      ->envname(gpuaas::service::EnvName(kInstance.name, "ACCESS_CODE_TTL"))
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  gpuaas::instance::AddBackHalfFlags(app, kInstance.name, flags.back);
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(flags.common.log_level);
  return Run(flags);
}
