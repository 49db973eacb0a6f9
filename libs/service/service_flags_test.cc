#include "libs/service/service_flags.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>

#include "libs/testing/status_matchers.h"

namespace gpuaas::service {
namespace {

using ::gpuaas::testing::StatusIs;

constexpr ServiceIdentity kStock{.name = "stock", .grpc_port = 17052, .metrics_port = 9102};

TEST(ServiceFlags, DefaultsMatchTheDevStack) {
  CLI::App app;
  ServiceFlags f;
  AddServiceFlags(app, kStock, f);
  app.parse(std::vector<std::string>{});
  EXPECT_EQ(f.listen, "0.0.0.0:17052");
  EXPECT_EQ(f.metrics_listen, "0.0.0.0:9102");
  EXPECT_EQ(f.db_dsn, "postgresql://gpuaas_stock@127.0.0.1:15432/gpuaas");
  EXPECT_EQ(ServerOptionsFor(kStock, f).name, "stock");
}

TEST(ServiceFlags, FlagBeatsEnvironmentBeatsDefault) {
  ::setenv("GPUAAS_STOCK_DB_POOL_SIZE", "3", 1);
  ::setenv("GPUAAS_STOCK_LISTEN", "127.0.0.1:1", 1);
  CLI::App app;
  ServiceFlags f;
  AddServiceFlags(app, kStock, f);
  app.parse(std::vector<std::string>{"127.0.0.1:2", "--listen"});  // CLI11 parses reversed
  ::unsetenv("GPUAAS_STOCK_DB_POOL_SIZE");
  ::unsetenv("GPUAAS_STOCK_LISTEN");
  EXPECT_EQ(f.db_pool_size, 3);
  EXPECT_EQ(f.listen, "127.0.0.1:2");
}

TEST(ServiceFlags, RangeChecked) {
  CLI::App app;
  ServiceFlags f;
  AddServiceFlags(app, kStock, f);
  EXPECT_THROW(app.parse(std::vector<std::string>{"0", "--workers"}), CLI::ValidationError);
}

TEST(ServiceFlags, CertificateNeedsItsKey) {
  ServiceFlags f;
  f.tls.cert_file = "server.crt";
  EXPECT_THAT(ValidateServiceFlags(f),
              StatusIs(absl::StatusCode::kInvalidArgument, "--tls-cert and --tls-key go together"));
  f.tls.key_file = "server.key";
  EXPECT_OK(ValidateServiceFlags(f));
  f.tls.require_client_cert = true;
  EXPECT_THAT(ValidateServiceFlags(f), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ServiceFlags, DsnCarriesNoPassword) {
  ServiceFlags f;
  f.db_dsn = "host=127.0.0.1 dbname=gpuaas user=gpuaas_auth passfile=/state/auth.pgpass";
  EXPECT_OK(ValidateServiceFlags(f));
  for (const char* dsn : {"host=127.0.0.1 user=gpuaas_auth password=hunter2",
                          "postgresql://gpuaas_auth:hunter2@127.0.0.1:15432/gpuaas",
                          "postgresql://gpuaas_auth@127.0.0.1/gpuaas?password=hunter2"}) {
    f.db_dsn = dsn;
    absl::Status s = ValidateServiceFlags(f);
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << dsn;
    EXPECT_EQ(s.message().find("hunter2"), std::string::npos) << s.message();
  }
}

TEST(ServiceFlags, EnvName) { EXPECT_EQ(EnvName("auth", "DB_DSN"), "GPUAAS_AUTH_DB_DSN"); }

}  // namespace
}  // namespace gpuaas::service
