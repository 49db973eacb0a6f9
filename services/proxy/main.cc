// gpuaas-proxy: wiring only. Follows every instance through one WatchInstances stream (its
// routes), verifies access tokens against the auth service's JWKS, and serves
// http(s)://<instance_id>-<port>.<access domain>/ by forwarding to the workloads' host ports.
// Every flag has a GPUAAS_PROXY_* environment fallback.
#include <CLI/CLI.hpp>
#include <csignal>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "libs/authz/grpc_jwks_source.h"
#include "libs/client/access_tokens.h"
#include "libs/client/auth_client.h"
#include "libs/client/channel.h"
#include "libs/common/clock.h"
#include "libs/common/files.h"
#include "libs/common/logging.h"
#include "libs/rpc/metrics_endpoint.h"
#include "libs/rpc/process_metrics.h"
#include "services/proxy/access_activity.h"
#include "services/proxy/access_client.h"
#include "services/proxy/access_cookie.h"
#include "services/proxy/proxy_metrics.h"
#include "services/proxy/proxy_server.h"
#include "services/proxy/route_watcher.h"
#include "services/proxy/static_routes.h"

namespace {

namespace proxy = gpuaas::proxy;

struct ProxyFlags {
  std::string listen = "0.0.0.0:8080";
  std::string access_domain = "gpuaas.localhost";
  std::string instance_addr = "127.0.0.1:17054";
  std::string auth_addr = "127.0.0.1:17051";
  std::string api_key_file;
  std::string cookie_secret_file;
  std::string cookie_ttl = "12h";
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  std::string tls_client_cert;
  std::string tls_client_key;
  std::string metrics_listen = "0.0.0.0:9105";
  std::string report_interval = "30s";
  std::string header_timeout = "30s";
  std::string body_timeout = "60s";
  std::string upstream_timeout = "5m";
  int io_threads = 2;
  std::vector<std::string> static_routes;
  std::string log_level = "info";
};

std::string Env(const char* flag) { return std::string("GPUAAS_PROXY_") + flag; }

void DefineFlags(CLI::App& app, ProxyFlags& f) {
  app.add_option("--listen", f.listen, "HTTP(S) listen address; port 0 picks a free one")
      ->envname(Env("LISTEN"))
      ->capture_default_str();
  app.add_option("--access-domain", f.access_domain,
                 "serve <instance_id>-<port>.<this domain> (a Host's port is ignored)")
      ->envname(Env("ACCESS_DOMAIN"))
      ->capture_default_str();
  app.add_option("--instance-addr", f.instance_addr, "the instance service (routes, access codes)")
      ->envname(Env("INSTANCE_ADDR"))
      ->capture_default_str();
  app.add_option("--auth-addr", f.auth_addr, "the auth service (JWKS, and to exchange the API key)")
      ->envname(Env("AUTH_ADDR"))
      ->capture_default_str();
  app.add_option("--api-key-file", f.api_key_file,
                 "file holding a SERVICE-role API key, <api_key_id>.<secret>")
      ->envname(Env("API_KEY_FILE"));
  app.add_option("--cookie-secret-file", f.cookie_secret_file,
                 "HMAC key of the access cookie (at least 32 bytes), the same for every replica")
      ->envname(Env("COOKIE_SECRET_FILE"));
  app.add_option("--cookie-ttl", f.cookie_ttl, "how long a one-time link's cookie lasts")
      ->envname(Env("COOKIE_TTL"))
      ->capture_default_str();
  app.add_option("--tls-cert", f.tls_cert, "serve HTTPS with this (wildcard) certificate (PEM)")
      ->envname(Env("TLS_CERT"))
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", f.tls_key, "private key (PEM) of --tls-cert")
      ->envname(Env("TLS_KEY"))
      ->check(CLI::ExistingFile);
  app.add_option("--tls-ca", f.tls_ca, "CA (PEM) verifying the auth and instance services")
      ->envname(Env("TLS_CA"))
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-cert", f.tls_client_cert,
                 "certificate (PEM) presented to the auth and instance services (mutual TLS)")
      ->envname(Env("TLS_CLIENT_CERT"))
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-key", f.tls_client_key, "private key (PEM) of --tls-client-cert")
      ->envname(Env("TLS_CLIENT_KEY"))
      ->check(CLI::ExistingFile);
  app.add_option("--metrics-listen", f.metrics_listen, "Prometheus /metrics address ('' = off)")
      ->envname(Env("METRICS_LISTEN"))
      ->capture_default_str();
  app.add_option("--report-interval", f.report_interval,
                 "how often the instances reached are reported (idle auto-stop)")
      ->envname(Env("REPORT_INTERVAL"))
      ->capture_default_str();
  app.add_option("--header-timeout", f.header_timeout,
                 "a client must send a whole request head within this (idle, slowloris)")
      ->envname(Env("HEADER_TIMEOUT"))
      ->capture_default_str();
  app.add_option("--body-timeout", f.body_timeout, "the longest a client's body may stall")
      ->envname(Env("BODY_TIMEOUT"))
      ->capture_default_str();
  app.add_option("--upstream-timeout", f.upstream_timeout,
                 "the longest a workload may take to start or continue its response")
      ->envname(Env("UPSTREAM_TIMEOUT"))
      ->capture_default_str();
  app.add_option("--io-threads", f.io_threads, "threads serving connections")
      ->envname(Env("IO_THREADS"))
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--static-route-for-benchmarks", f.static_routes,
                 "BENCHMARKS ONLY: route <instance_id>-<port> to TENANT@HOST:PORT instead of "
                 "watching the instance service (repeatable); tokens are still verified")
      ->envname(Env("STATIC_ROUTE_FOR_BENCHMARKS"));
  app.add_option("--log-level", f.log_level)
      ->envname(Env("LOG_LEVEL"))
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
}

absl::StatusOr<absl::Duration> Duration(const std::string& flag, const std::string& text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": want a positive duration like 30s or 12h, got '", text, "'"));
  }
  return d;
}

int Run(const ProxyFlags& f) {
  // SIGTERM and SIGINT end the process cleanly; blocked before any thread starts (gRPC's,
  // civetweb's, ours) so every thread inherits the mask and only the sigwait below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto log = gpuaas::Logger("proxy");
  auto fail = [&](const absl::Status& s) {
    log->critical("{}", s.ToString());
    return 2;
  };
  absl::StatusOr<absl::Duration> ttl = Duration("--cookie-ttl", f.cookie_ttl);
  absl::StatusOr<absl::Duration> report = Duration("--report-interval", f.report_interval);
  absl::StatusOr<absl::Duration> header = Duration("--header-timeout", f.header_timeout);
  absl::StatusOr<absl::Duration> body = Duration("--body-timeout", f.body_timeout);
  absl::StatusOr<absl::Duration> upstream = Duration("--upstream-timeout", f.upstream_timeout);
  for (const absl::Status& s :
       {ttl.status(), report.status(), header.status(), body.status(), upstream.status()}) {
    if (!s.ok()) {
      return fail(s);
    }
  }
  if (f.tls_cert.empty() != f.tls_key.empty()) {
    return fail(absl::InvalidArgumentError("--tls-cert and --tls-key go together"));
  }
  if (f.api_key_file.empty()) {
    return fail(absl::InvalidArgumentError("--api-key-file is required (a SERVICE-role key)"));
  }
  if (f.cookie_secret_file.empty()) {
    return fail(absl::InvalidArgumentError("--cookie-secret-file is required"));
  }
  absl::StatusOr<std::string> api_key = gpuaas::ReadSecretFile(f.api_key_file);
  if (!api_key.ok()) {
    return fail(
        absl::InvalidArgumentError(absl::StrCat("--api-key-file: ", api_key.status().message())));
  }
  absl::StatusOr<std::string> cookie_key = gpuaas::ReadSecretFile(f.cookie_secret_file);
  if (!cookie_key.ok() || cookie_key->size() < 32) {
    return fail(absl::InvalidArgumentError(
        "--cookie-secret-file: want a key of at least 32 bytes on its first line"));
  }
  absl::StatusOr<std::vector<proxy::StaticRoute>> static_routes =
      proxy::ParseStaticRoutes(f.static_routes);
  if (!static_routes.ok()) {
    return fail(static_routes.status());
  }

  if (f.tls_client_cert.empty() != f.tls_client_key.empty()) {
    return fail(absl::InvalidArgumentError("--tls-client-cert and --tls-client-key go together"));
  }
  const gpuaas::client::TlsOptions client_tls{
      .ca_file = f.tls_ca, .cert_file = f.tls_client_cert, .key_file = f.tls_client_key};
  absl::StatusOr<std::shared_ptr<grpc::Channel>> auth_channel =
      gpuaas::client::OpenChannel(f.auth_addr, client_tls);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> instance_channel =
      gpuaas::client::OpenChannel(f.instance_addr, client_tls);
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
      [&access](const std::vector<std::string>& ids) { return access.Report(ids); }, *report);
  proxy::RouteTable routes;
  proxy::ProxyMetrics metrics;

  proxy::ProxyServer server({.listen_address = f.listen,
                             .access_domain = f.access_domain,
                             .cookie_ttl = *ttl,
                             .tls_cert_file = f.tls_cert,
                             .tls_key_file = f.tls_key,
                             .io_threads = f.io_threads,
                             .header_timeout = *header,
                             .body_timeout = *body,
                             .upstream_timeout = *upstream},
                            {.routes = routes,
                             .authenticator = *authenticator,
                             .cookies = cookies,
                             .redeemer = access,
                             .activity = &activity,
                             .metrics = metrics,
                             .clock = clock});
  std::unique_ptr<gpuaas::rpc::MetricsEndpoint> metrics_endpoint;
  if (!f.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<gpuaas::rpc::MetricsEndpoint>> endpoint =
        gpuaas::rpc::MetricsEndpoint::Start(
            f.metrics_listen,
            {metrics.registry(), std::make_shared<gpuaas::rpc::ProcessMetrics>()});
    if (!endpoint.ok()) {
      log->critical("metrics: {}", endpoint.status().ToString());
      return 1;
    }
    metrics_endpoint = *std::move(endpoint);
  }

  if (absl::Status s = server.Start(); !s.ok()) {
    log->critical("{}", s.ToString());
    return 1;
  }
  log->info("gpuaas-proxy serving *.{} on port {} (metrics port {}); instance service at {}",
            f.access_domain, server.port(), metrics_endpoint ? metrics_endpoint->port() : 0,
            f.instance_addr);

  proxy::RouteWatcher watcher(*instance_channel, tokens, routes);
  std::thread watching;
  if (static_routes->empty()) {
    watching = std::thread([&] { watcher.Run(); });
  } else {
    log->warn("--static-route-for-benchmarks: {} static routes, not watching instances",
              static_routes->size());
    proxy::InstallStaticRoutes(*static_routes, routes);
  }
  std::thread reporting([&] { activity.Run(); });
  std::thread gauges([&] {
    // The routed-instance gauge, refreshed while the process runs.
    for (;;) {
      metrics.routes().Set(static_cast<double>(routes.size()));
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });
  gauges.detach();

  int sig = 0;
  sigwait(&stop_signals, &sig);
  log->info("signal {}: stopping", sig);
  server.Stop();
  watcher.Stop();
  activity.Stop();
  if (watching.joinable()) {
    watching.join();
  }
  reporting.join();
  metrics_endpoint.reset();
  log->info("gpuaas-proxy stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "gpuaas-proxy: the access proxy. Serves http(s)://<instance_id>-<port>.<access domain>/ "
      "by forwarding to the instance's workload, for its tenant's tokens, a one-time link's "
      "cookie, or anyone on a public port");
  ProxyFlags flags;
  DefineFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(flags.log_level);
  return Run(flags);
}
