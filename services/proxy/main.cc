// gpuaas-proxy: wiring only. Follows every instance through one WatchInstances stream (its
// routes), verifies access tokens against the auth service's JWKS, and serves
// http(s)://<instance_id>-<port>.<access domain>/ by forwarding to the workloads' host ports.
// Every flag has a GPUAAS_PROXY_* environment fallback.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "libs/authz/grpc_jwks_source.h"
#include "libs/client/access_tokens.h"
#include "libs/client/auth_client.h"
#include "libs/common/clock.h"
#include "libs/common/files.h"
#include "libs/common/logging.h"
#include "libs/common/periodic_task.h"
#include "libs/rpc/metrics_endpoint.h"
#include "libs/service/env_options.h"
#include "libs/service/lifecycle.h"
#include "libs/service/process_flags.h"
#include "services/proxy/access_activity.h"
#include "services/proxy/access_client.h"
#include "services/proxy/access_cookie.h"
#include "services/proxy/proxy_metrics.h"
#include "services/proxy/proxy_server.h"
#include "services/proxy/route_watcher.h"
#include "services/proxy/static_routes.h"

namespace {

namespace proxy = gpuaas::proxy;

constexpr gpuaas::service::ServiceIdentity kProxy{
    .name = "proxy", .grpc_port = 8080, .metrics_port = 9105};

struct ProxyFlags {
  gpuaas::service::ProcessFlags process;
  gpuaas::service::PeerFlags peers;
  std::string access_domain = "gpuaas.localhost";
  std::string cookie_secret_file;
  absl::Duration cookie_ttl = absl::Hours(12);
  absl::Duration grant_recheck = absl::Seconds(60);
  absl::Duration report_interval = absl::Seconds(30);
  absl::Duration header_timeout = absl::Seconds(30);
  absl::Duration body_timeout = absl::Seconds(60);
  absl::Duration upstream_timeout = absl::Minutes(5);
  int max_connections = 10000;
  int max_connections_per_client = 256;
  std::vector<std::string> static_routes;
};

void DefineFlags(CLI::App& app, ProxyFlags& f) {
  app.description(
      "gpuaas-proxy: the access proxy. Serves http(s)://<instance_id>-<port>.<access domain>/ "
      "by forwarding to the instance's workload, for its tenant's tokens, a one-time link's "
      "cookie, or anyone on a public port");
  f.process.workers = 2;
  gpuaas::service::AddProcessFlags(app, kProxy, gpuaas::service::ServerKind::kHttp, f.process);
  gpuaas::service::EnvOptions options(app, kProxy.name);
  options.Add("--access-domain", f.access_domain,
              "serve <instance_id>-<port>.<this domain> (a Host's port is ignored)");
  options.Add("--instance-addr", f.peers.instance_addr,
              "the instance service (routes, access codes)");
  options.Add("--auth-addr", f.peers.auth_addr,
              "the auth service (JWKS, and to exchange the API key)");
  options.Add("--api-key-file", f.peers.api_key_file,
              "file holding the proxy's ACCESS_PROXY API key, <api_key_id>.<secret>");
  options.Add("--cookie-secret-file", f.cookie_secret_file,
              "HMAC key of the access cookie (at least 32 bytes), the same for every replica");
  options.Add("--cookie-ttl", f.cookie_ttl, "how long a one-time link's cookie lasts");
  options.Add("--grant-recheck", f.grant_recheck,
              "a cookie's grant is confirmed with the instance service again after this long, "
              "so a removed member or deleted instance loses access within it");
  options.Add("--report-interval", f.report_interval,
              "how often the instances reached are reported (idle auto-stop)");
  options.Add("--header-timeout", f.header_timeout,
              "a client must send a whole request head within this (idle, slowloris)");
  options.Add("--body-timeout", f.body_timeout, "the longest a client's body may stall");
  options.Add("--upstream-timeout", f.upstream_timeout,
              "the longest a workload may take to start or continue its response");
  options.Add("--max-connections", f.max_connections,
              "client connections open at once, in total; more are refused at accept (503)");
  options.Add("--max-connections-per-client", f.max_connections_per_client,
              "client connections open at once from one client address; more are refused");
  options.Add("--static-route-for-benchmarks", f.static_routes,
              "BENCHMARKS ONLY: route <instance_id>-<port> to TENANT@HOST:PORT instead of "
              "watching the instance service (repeatable); tokens are still verified");
}

int Run(const ProxyFlags& f, gpuaas::service::TerminationSignals& signals) {
  auto log = gpuaas::Logger("proxy");
  auto fail = [&](const absl::Status& s) {
    log->critical("{}", s.ToString());
    return 2;
  };
  if (f.cookie_secret_file.empty()) {
    return fail(absl::InvalidArgumentError("--cookie-secret-file is required"));
  }
  absl::StatusOr<std::string> api_key = gpuaas::service::ReadApiKey(f.peers);
  if (!api_key.ok()) {
    return fail(api_key.status());
  }
  absl::StatusOr<std::string> cookie_key = gpuaas::ReadSecretFile(f.cookie_secret_file);
  if (!cookie_key.ok() || cookie_key->size() < 32) {
    return fail(absl::InvalidArgumentError(
        "--cookie-secret-file: want a key of at least 32 bytes on its first line"));
  }
  if (f.grant_recheck <= absl::ZeroDuration()) {
    return fail(absl::InvalidArgumentError("--grant-recheck: want a positive duration"));
  }
  if (f.max_connections < 1 || f.max_connections_per_client < 1) {
    return fail(absl::InvalidArgumentError(
        "--max-connections and --max-connections-per-client: want at least 1"));
  }
  absl::StatusOr<std::vector<proxy::StaticRoute>> static_routes =
      proxy::ParseStaticRoutes(f.static_routes);
  if (!static_routes.ok()) {
    return fail(static_routes.status());
  }

  absl::StatusOr<std::shared_ptr<grpc::Channel>> auth_channel =
      gpuaas::service::OpenPeerChannel(f.process, f.peers.auth_addr);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> instance_channel =
      gpuaas::service::OpenPeerChannel(f.process, f.peers.instance_addr);
  if (!auth_channel.ok() || !instance_channel.ok()) {
    return fail(!auth_channel.ok() ? auth_channel.status() : instance_channel.status());
  }
  gpuaas::SystemClock clock;
  gpuaas::client::AuthClient auth(*auth_channel);
  gpuaas::client::AccessTokens tokens(auth, *std::move(api_key), clock);
  std::unique_ptr<gpuaas::authz::Authenticator> authenticator =
      gpuaas::authz::NewJwksAuthenticator(gpuaas::authz::NewGrpcJwksSource(*auth_channel), clock);
  proxy::AccessCookieSigner cookies(*std::move(cookie_key));
  proxy::AccessClient access(*instance_channel, tokens);
  proxy::AccessActivity activity(
      [&access](const std::vector<std::string>& ids) { return access.Report(ids); });
  proxy::RouteTable routes;
  proxy::ProxyMetrics metrics;

  proxy::ProxyServer server(
      {.listen_address = f.process.listen,
       .access_domain = f.access_domain,
       .cookie_ttl = f.cookie_ttl,
       .tls_cert_file = f.process.tls.cert_file,
       .tls_key_file = f.process.tls.key_file,
       .io_threads = f.process.workers,
       .header_timeout = f.header_timeout,
       .body_timeout = f.body_timeout,
       .upstream_timeout = f.upstream_timeout,
       .grant_recheck = f.grant_recheck,
       .connection_limits = {.max_connections = f.max_connections,
                             .max_connections_per_client = f.max_connections_per_client}},
      {.routes = routes,
       .authenticator = *authenticator,
       .cookies = cookies,
       .redeemer = access,
       .grants = access,
       .activity = &activity,
       .metrics = metrics,
       .clock = clock});
  absl::StatusOr<std::unique_ptr<gpuaas::rpc::MetricsEndpoint>> metrics_endpoint =
      gpuaas::service::StartMetrics(f.process, {metrics.registry()});
  if (!metrics_endpoint.ok()) {
    log->critical("metrics: {}", metrics_endpoint.status().ToString());
    return 1;
  }

  if (absl::Status s = server.Start(); !s.ok()) {
    log->critical("{}", s.ToString());
    return 1;
  }
  log->info("gpuaas-proxy serving *.{} on port {} (metrics port {}); instance service at {}",
            f.access_domain, server.port(), *metrics_endpoint ? (*metrics_endpoint)->port() : 0,
            f.peers.instance_addr);

  // Until SIGTERM/SIGINT; then the server stops and the loops stop and join, newest first.
  proxy::RouteWatcher watcher(*instance_channel, tokens, routes);
  std::optional<gpuaas::service::LoopThread> watching;
  if (static_routes->empty()) {
    watching.emplace([&] { watcher.Run(); }, [&] { watcher.Stop(); });
  } else {
    log->warn("--static-route-for-benchmarks: {} static routes, not watching instances",
              static_routes->size());
    proxy::InstallStaticRoutes(*static_routes, routes);
  }
  // What was reached goes out every --report-interval, and once more after the server stopped.
  auto report_access = [&] {
    if (absl::Status s = activity.Flush(); !s.ok()) {
      log->warn("reporting access: {}", s.ToString());
    }
  };
  gpuaas::PeriodicTask reporting({.interval = f.report_interval}, report_access);
  gpuaas::PeriodicTask gauges({.interval = absl::Seconds(1), .run_immediately = true},
                              [&] { metrics.routes().Set(static_cast<double>(routes.size())); });
  signals.Wait();
  server.Stop();
  reporting.Join();
  report_access();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return gpuaas::service::RunProcess(argc, argv, kProxy, DefineFlags, Run);
}
