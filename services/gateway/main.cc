// gpuaas-gateway: wiring only. Serves the REST/JSON API transcoded from the protos' HTTP rules,
// the web console and the OpenAPI document, calling the services with each caller's own
// credentials. Every flag has a GPUAAS_GATEWAY_* environment fallback.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "libs/client/auth_client.h"
#include "libs/common/clock.h"
#include "libs/common/logging.h"
#include "libs/http/http_transport.h"
#include "libs/rpc/metrics_endpoint.h"
#include "libs/service/env_options.h"
#include "libs/service/lifecycle.h"
#include "libs/service/process_flags.h"
#include "services/gateway/backends.h"
#include "services/gateway/gateway_server.h"
#include "services/gateway/public_services.h"
#include "services/gateway/route_table.h"

namespace {

namespace gateway = gpuaas::gateway;

constexpr gpuaas::service::ServiceIdentity kGateway{
    .name = "gateway", .grpc_port = 8090, .metrics_port = 9106};

struct GatewayFlags {
  gpuaas::service::ProcessFlags process;
  gpuaas::service::PeerFlags peers;
  bool secure_cookies = false;
  std::string s3_endpoint = "http://127.0.0.1:9000";
  absl::Duration header_timeout = absl::Seconds(15);
  absl::Duration body_timeout = absl::Seconds(30);
  absl::Duration body_rate_grace = absl::Seconds(30);
  int64_t body_min_rate = 500;
  absl::Duration call_timeout = absl::Seconds(30);
  int max_connections_per_client = 64;
  int max_streams = 192;
  int max_streams_per_client = 16;
  absl::Duration stream_recheck = absl::Seconds(60);
  std::string trusted_proxies;
};

void DefineFlags(CLI::App& app, GatewayFlags& f) {
  app.description(
      "gpuaas-gateway: the REST/JSON API (transcoded from the protos' google.api.http rules), "
      "the web console and /openapi.json, in front of the gRPC services");
  f.process.workers = 256;
  gpuaas::service::AddProcessFlags(app, kGateway, gpuaas::service::ServerKind::kHttp, f.process);
  gpuaas::service::EnvOptions options(app, kGateway.name);
  options.Add("--auth-addr", f.peers.auth_addr, "the auth service");
  options.Add("--stock-addr", f.peers.stock_addr, "the stock service");
  options.Add("--storage-addr", f.peers.storage_addr, "the storage service");
  options.Add("--instance-addr", f.peers.instance_addr, "the instance service");
  options.Add(
      "--s3-endpoint", f.s3_endpoint,
      "the storage service's S3 endpoint as browsers reach it (the console's file browser)");
  options.Add("--secure-cookies", f.secure_cookies,
              "without --tls-cert, TLS ends in front of us: the console's cookies are Secure "
              "and its pages' origin is https://");
  options.Add("--header-timeout", f.header_timeout,
              "a client must send a whole request head within this (idle, slowloris)");
  options.Add("--body-timeout", f.body_timeout, "the longest a client's body may stall");
  options.Add("--body-rate-grace", f.body_rate_grace,
              "after this long waiting for a request body, it must keep --body-min-rate");
  options
      .Add("--body-min-rate", f.body_min_rate,
           "bytes per second a request body must average after --body-rate-grace, or it is "
           "answered 408 and closed (a trickle would hold a worker); 0: no minimum")
      ->check(CLI::NonNegativeNumber);
  options.Add("--call-timeout", f.call_timeout, "the deadline of each call to a service");
  options.Add("--max-connections-per-client", f.max_connections_per_client,
              "connections open at once from one client address; more are answered 503");
  options.Add("--max-streams", f.max_streams,
              "event streams (watch, logs) open at once; each holds a worker (--io-threads)");
  options.Add("--max-streams-per-client", f.max_streams_per_client,
              "event streams open at once from one client address");
  options.Add("--stream-recheck", f.stream_recheck,
              "an open event stream's token and membership are asked about again this often; "
              "one whose token expired or whose user left the tenant ends within the bound");
  options.Add("--trusted-proxies", f.trusted_proxies,
              "comma-separated CIDRs of the proxies in front of us: only from these peers are "
              "X-Forwarded-For / Forwarded believed (default none: the TCP peer is the client)");
  options.Add("--api-key-file", f.peers.api_key_file,
              "the gateway's own API key (role gateway): with it, the auth service hears "
              "which client address a login came from and throttles guessing by it");
}

int Run(const GatewayFlags& f, gpuaas::service::TerminationSignals& signals) {
  auto log = gpuaas::Logger("gateway");
  auto fail = [&](const absl::Status& s) {
    log->critical("{}", s.ToString());
    return 2;
  };
  if (f.max_streams < 1 || f.max_streams_per_client < 1 || f.max_connections_per_client < 1) {
    return fail(absl::InvalidArgumentError(
        "--max-streams, --max-streams-per-client, --max-connections-per-client: want at least 1"));
  }
  if (f.stream_recheck < absl::Seconds(1)) {
    return fail(absl::InvalidArgumentError("--stream-recheck: want at least 1s"));
  }
  if (f.max_streams >= f.process.workers) {
    return fail(absl::InvalidArgumentError(
        "--max-streams: want fewer than --io-threads, or streams would hold every worker"));
  }
  absl::StatusOr<std::vector<const google::protobuf::ServiceDescriptor*>> services =
      gateway::PublicServiceDescriptors();
  if (!services.ok()) {
    return fail(services.status());
  }
  absl::StatusOr<gateway::RouteTable> routes = gateway::RouteTable::FromServices(*services);
  if (!routes.ok()) {
    return fail(routes.status());
  }
  gateway::Backends backends;
  std::shared_ptr<grpc::Channel> auth_channel;
  for (const gateway::PublicService& s : gateway::kPublicServices) {
    const std::string& addr = s.peer == gateway::Peer::kAuth      ? f.peers.auth_addr
                              : s.peer == gateway::Peer::kStock   ? f.peers.stock_addr
                              : s.peer == gateway::Peer::kStorage ? f.peers.storage_addr
                                                                  : f.peers.instance_addr;
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        gpuaas::service::OpenPeerChannel(f.process, addr);
    if (!channel.ok()) {
      return fail(channel.status());
    }
    if (s.peer == gateway::Peer::kAuth) auth_channel = *channel;
    backends.Add(std::string(s.name), *std::move(channel));
  }
  gpuaas::SystemClock clock;
  gpuaas::client::AuthClient auth(auth_channel);
  absl::StatusOr<gateway::TrustedProxies> trusted =
      gateway::TrustedProxies::Parse("--trusted-proxies", f.trusted_proxies);
  if (!trusted.ok()) {
    return fail(trusted.status());
  }
  std::unique_ptr<gpuaas::client::AccessTokens> own_tokens;
  if (!f.peers.api_key_file.empty()) {
    absl::StatusOr<std::string> key = gpuaas::service::ReadApiKey(f.peers);
    if (!key.ok()) {
      return fail(key.status());
    }
    own_tokens = std::make_unique<gpuaas::client::AccessTokens>(auth, *std::move(key), clock);
  } else {
    log->warn("no --api-key-file: the auth service counts every REST login as the gateway's");
  }

  gateway::GatewayOptions options{
      .tls_cert_file = f.process.tls.cert_file,
      .tls_key_file = f.process.tls.key_file,
      .secure_cookies = f.secure_cookies,
      .threads = f.process.workers,
      .limits = {.max_connections_per_client = f.max_connections_per_client,
                 .header_timeout = f.header_timeout,
                 .body_idle_timeout = f.body_timeout,
                 .body_rate_grace = f.body_rate_grace,
                 .body_min_rate = f.body_min_rate},
      .call_timeout = f.call_timeout,
      .max_streams = f.max_streams,
      .max_streams_per_client = f.max_streams_per_client,
      .stream_recheck = f.stream_recheck,
      .s3_endpoint = f.s3_endpoint,
      .vouching = {.trusted = *std::move(trusted), .tokens = own_tokens.get()}};
  if (absl::Status s =
          gpuaas::http::ParseListen("--listen", f.process.listen, options.host, options.port);
      !s.ok()) {
    return fail(s);
  }
  gateway::GatewayServer server(options, *routes, backends, auth, clock);
  absl::StatusOr<std::unique_ptr<gpuaas::rpc::MetricsEndpoint>> metrics =
      gpuaas::service::StartMetrics(f.process, {});
  if (!metrics.ok()) {
    log->critical("metrics: {}", metrics.status().ToString());
    return 1;
  }
  if (absl::Status s = server.Start(); !s.ok()) {
    log->critical("{}", s.ToString());
    return 1;
  }
  log->info("gpuaas-gateway serving {} REST routes and the console on port {}",
            routes->routes().size(), server.port());
  signals.Wait();
  server.Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return gpuaas::service::RunProcess(argc, argv, kGateway, DefineFlags, Run);
}
