#include "libs/client/endpoint.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"

namespace gpuaas::client {
namespace {

using ::gpuaas::testing::TempDir;

Settings SettingsWith(const TempDir& dir, std::map<std::string, std::string> env,
                      std::string_view stack_env) {
  if (!stack_env.empty()) {
    std::filesystem::create_directories(dir.path() / ".gpuaas");
    std::ofstream(dir.path() / ".gpuaas/stack.env") << stack_env;
  }
  return Settings(MapEnv(std::move(env)), dir.path());
}

TEST(EndpointTest, EveryServiceHasItsVariableAndDesignPort) {
  const std::vector<std::tuple<Service, std::string_view, std::string_view, std::string_view>>
      want = {
          {Service::kAuth, "auth", "GPUAAS_AUTH_ADDR", "localhost:17051"},
          {Service::kStock, "stock", "GPUAAS_STOCK_ADDR", "localhost:17052"},
          {Service::kStorage, "storage", "GPUAAS_STORAGE_ADDR", "localhost:17053"},
          {Service::kInstance, "instance", "GPUAAS_INSTANCE_ADDR", "localhost:17054"},
      };
  for (const auto& [service, name, var, address] : want) {
    EXPECT_EQ(ServiceName(service), name);
    EXPECT_EQ(AddressEnvVar(service), var);
    EXPECT_EQ(DefaultAddress(service), address);
  }
}

TEST(EndpointTest, AddressFlagBeatsEnvBeatsStackEnvBeatsDefault) {
  TempDir dir;
  Settings settings = SettingsWith(dir, {{"GPUAAS_STOCK_ADDR", "env:1"}},
                                   "GPUAAS_STOCK_ADDR=file:1\nGPUAAS_STORAGE_ADDR=file:2\n");
  Endpoint flags;
  flags.address = "flag:1";
  ASSERT_OK_AND_ASSIGN(Endpoint from_flag, ResolveEndpoint(Service::kStock, flags, settings));
  EXPECT_EQ(from_flag.address, "flag:1");
  ASSERT_OK_AND_ASSIGN(Endpoint from_env, ResolveEndpoint(Service::kStock, {}, settings));
  EXPECT_EQ(from_env.address, "env:1");
  ASSERT_OK_AND_ASSIGN(Endpoint from_file, ResolveEndpoint(Service::kStorage, {}, settings));
  EXPECT_EQ(from_file.address, "file:2");
  ASSERT_OK_AND_ASSIGN(Endpoint fallback, ResolveEndpoint(Service::kInstance, {}, settings));
  EXPECT_EQ(fallback.address, "localhost:17054");
}

TEST(EndpointTest, TlsFilesComeFromStackEnvUnlessGiven) {
  TempDir dir;
  Settings settings = SettingsWith(dir, {{"GPUAAS_TLS_CERT", "/env/client.crt"}},
                                   "GPUAAS_AUTH_ADDR=127.0.0.1:17051\nGPUAAS_TLS_CA=/s/ca.crt\n"
                                   "GPUAAS_TLS_CERT=/s/client.crt\nGPUAAS_TLS_KEY=/s/client.key\n");
  Endpoint flags;
  flags.tls.key_file = "/flag/client.key";
  flags.tls.server_name_override = "auth";
  ASSERT_OK_AND_ASSIGN(Endpoint e, ResolveEndpoint(Service::kAuth, flags, settings));
  EXPECT_EQ(e.address, "127.0.0.1:17051");
  EXPECT_EQ(e.tls.ca_file, "/s/ca.crt");
  EXPECT_EQ(e.tls.cert_file, "/env/client.crt");
  EXPECT_EQ(e.tls.key_file, "/flag/client.key");
  EXPECT_EQ(e.tls.server_name_override, "auth");
}

TEST(EndpointTest, PlaintextDefaultWithoutAnySetting) {
  TempDir dir;
  Settings settings = SettingsWith(dir, {}, "");
  ASSERT_OK_AND_ASSIGN(Endpoint e, ResolveEndpoint(Service::kAuth, {}, settings));
  EXPECT_EQ(e.address, "localhost:17051");
  EXPECT_TRUE(e.tls.ca_file.empty());
  EXPECT_TRUE(e.tls.cert_file.empty());
  EXPECT_TRUE(e.tls.key_file.empty());
}

}  // namespace
}  // namespace gpuaas::client
