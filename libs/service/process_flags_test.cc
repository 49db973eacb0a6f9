#include "libs/service/process_flags.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>

#include "libs/rpc/metrics_endpoint.h"
#include "libs/service/env_options.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::service {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

constexpr ServiceIdentity kAgent{.name = "agent", .grpc_port = 17061, .metrics_port = 9161};
constexpr ServiceIdentity kProxy{.name = "proxy", .grpc_port = 8080, .metrics_port = 9105};

TEST(FlagEnvName, FromTheProcessAndTheFirstLongName) {
  EXPECT_EQ(FlagEnvName("agent", "--stock-addr"), "GPUAAS_AGENT_STOCK_ADDR");
  EXPECT_EQ(FlagEnvName("agent", "--listen,--listen-address"), "GPUAAS_AGENT_LISTEN");
  EXPECT_EQ(FlagEnvName("proxy", "--static-route-for-benchmarks"),
            "GPUAAS_PROXY_STATIC_ROUTE_FOR_BENCHMARKS");
}

TEST(EnvOptions, OptionsAndFlagsFallBackOnTheirDerivedVariables) {
  ::setenv("GPUAAS_AGENT_STOCK_ADDR", "stock:1", 1);
  ::setenv("GPUAAS_AGENT_VERBOSE_THING", "true", 1);
  CLI::App app;
  std::string stock;
  bool verbose = false;
  EnvOptions options(app, "agent");
  options.Add("--stock-addr", stock);
  options.Add("--verbose-thing", verbose);
  app.parse(std::vector<std::string>{});
  ::unsetenv("GPUAAS_AGENT_STOCK_ADDR");
  ::unsetenv("GPUAAS_AGENT_VERBOSE_THING");
  EXPECT_EQ(stock, "stock:1");
  EXPECT_TRUE(verbose);
}

TEST(EnvOptions, ADurationIsParsedOrEndsTheParseWithExitCodeTwo) {
  ::setenv("GPUAAS_PROXY_COOKIE_TTL", "12h", 1);
  CLI::App app;
  absl::Duration ttl = absl::Minutes(1);
  absl::Duration heartbeat = absl::Seconds(2);
  EnvOptions options(app, "proxy");
  options.Add("--cookie-ttl", ttl, "");
  options.Add("--heartbeat-interval", heartbeat, "", /*allow_zero=*/true);
  app.parse(std::vector<std::string>{"0", "--heartbeat-interval"});  // CLI11: reversed
  ::unsetenv("GPUAAS_PROXY_COOKIE_TTL");
  EXPECT_EQ(ttl, absl::Hours(12));
  EXPECT_EQ(heartbeat, absl::ZeroDuration());
  try {
    app.parse(std::vector<std::string>{"0", "--cookie-ttl"});
    ADD_FAILURE() << "a zero --cookie-ttl was taken";
  } catch (const CLI::ParseError& e) {
    EXPECT_EQ(e.get_exit_code(), 2);
    EXPECT_THAT(e.what(), HasSubstr("--cookie-ttl: want a positive duration"));
  }
}

TEST(ProcessFlags, AGrpcProcessHasNoDatabaseFlags) {
  CLI::App app;
  ProcessFlags f;
  f.workers = 2;
  AddProcessFlags(app, kAgent, ServerKind::kGrpc, f);
  app.parse(std::vector<std::string>{"127.0.0.1:1", "--listen-address"});  // CLI11: reversed
  EXPECT_EQ(f.listen, "127.0.0.1:1");
  EXPECT_EQ(f.metrics_listen, "0.0.0.0:9161");
  EXPECT_EQ(f.workers, 2);
  EXPECT_EQ(ServerOptionsFor(kAgent, f).worker_threads, 2);
  EXPECT_EQ(ServerOptionsFor(kAgent, f).max_public_streams_per_client, 128);
  EXPECT_NE(app.get_option_no_throw("--tls-require-client-cert"), nullptr);
  EXPECT_EQ(app.get_option_no_throw("--db-dsn"), nullptr);
  EXPECT_EQ(app.get_option_no_throw("--tls-client-cert"), nullptr);
}

TEST(ProcessFlags, AnHttpProcessHasIoThreadsAndItsOwnClientCertificate) {
  ::setenv("GPUAAS_PROXY_IO_THREADS", "3", 1);
  CLI::App app;
  ProcessFlags f;
  AddProcessFlags(app, kProxy, ServerKind::kHttp, f);
  app.parse(std::vector<std::string>{});
  ::unsetenv("GPUAAS_PROXY_IO_THREADS");
  EXPECT_EQ(f.listen, "0.0.0.0:8080");
  EXPECT_EQ(f.workers, 3);
  EXPECT_EQ(app.get_option_no_throw("--workers"), nullptr);
  EXPECT_EQ(app.get_option_no_throw("--tls-require-client-cert"), nullptr);
  EXPECT_THROW(app.parse(std::vector<std::string>{"65", "--io-threads"}), CLI::ValidationError);
}

TEST(ProcessFlags, AClientCertificateNeedsItsKey) {
  ProcessFlags f;
  f.tls_client_cert = "client.crt";
  EXPECT_THAT(ValidateProcessFlags(f),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--tls-client-cert and --tls-client-key go together"));
}

TEST(PeerTlsOptions, AGrpcServerPresentsItsOwnCertificateWithTheCa) {
  ProcessFlags f;
  f.tls = {.cert_file = "agent.crt", .key_file = "agent.key"};
  EXPECT_EQ(PeerTlsOptions(f).cert_file, "");  // no CA: plaintext towards peers
  f.tls.ca_file = "ca.crt";
  const client::TlsOptions tls = PeerTlsOptions(f);
  EXPECT_EQ(tls.ca_file, "ca.crt");
  EXPECT_EQ(tls.cert_file, "agent.crt");
  EXPECT_EQ(tls.key_file, "agent.key");
}

TEST(PeerTlsOptions, AnHttpServerNeverPresentsItsPublicCertificate) {
  ProcessFlags f;
  f.kind = ServerKind::kHttp;
  f.tls = {.cert_file = "wildcard.crt", .key_file = "wildcard.key", .ca_file = "ca.crt"};
  EXPECT_EQ(PeerTlsOptions(f).cert_file, "");
  f.tls_client_cert = "client.crt";
  f.tls_client_key = "client.key";
  const client::TlsOptions tls = PeerTlsOptions(f);
  EXPECT_EQ(tls.ca_file, "ca.crt");
  EXPECT_EQ(tls.cert_file, "client.crt");
  EXPECT_EQ(tls.key_file, "client.key");
}

TEST(ParseDurationFlag, PositiveOrZeroWhenAllowed) {
  EXPECT_EQ(*ParseDurationFlag("--x", "30s"), absl::Seconds(30));
  EXPECT_EQ(*ParseDurationFlag("--x", "250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseDurationFlag("--x", "0", true), absl::ZeroDuration());
  for (const char* bad : {"", "30", "-1s", "soon", "inf"}) {
    EXPECT_THAT(ParseDurationFlag("--reprobe-interval", bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--reprobe-interval")))
        << bad;
  }
  EXPECT_THAT(ParseDurationFlag("--x", "0"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(StartMetrics, OffWithoutAnAddress) {
  ProcessFlags f;
  absl::StatusOr<std::unique_ptr<rpc::MetricsEndpoint>> off = StartMetrics(f, {});
  ASSERT_OK(off.status());
  EXPECT_EQ(*off, nullptr);
  f.metrics_listen = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<rpc::MetricsEndpoint>> on = StartMetrics(f, {});
  ASSERT_OK(on.status());
  EXPECT_GT((*on)->port(), 0);
}

}  // namespace
}  // namespace gpuaas::service
