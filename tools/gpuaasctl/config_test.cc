#include "tools/gpuaasctl/config.h"

#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "tools/gpuaasctl/temp_dir.h"

namespace gpuaas::ctl {
namespace {

namespace fs = std::filesystem;

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) {
      return std::nullopt;
    }
    return it->second;
  };
}

void WriteFile(const fs::path& p, std::string_view text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(ParseStackEnvTest, ReadsKeysAndSkipsNoise) {
  auto vars = ParseStackEnv(
      "# written by tools/gpuaas up\n"
      "\n"
      "GPUAAS_AUTH_ADDR=127.0.0.1:41234\n"
      "export GPUAAS_STOCK_ADDR = \"127.0.0.1:41235\"\n"
      "GARBAGE LINE\n"
      "=novalue\n"
      "QUOTED='a b'\r\n");
  EXPECT_EQ(vars["GPUAAS_AUTH_ADDR"], "127.0.0.1:41234");
  EXPECT_EQ(vars["GPUAAS_STOCK_ADDR"], "127.0.0.1:41235");
  EXPECT_EQ(vars["QUOTED"], "a b");
  EXPECT_EQ(vars.size(), 3u);
}

TEST(ParseStackEnvTest, LaterKeyWins) {
  EXPECT_EQ(ParseStackEnv("A=1\nA=2\n")["A"], "2");
}

TEST(ParseStackEnvTest, UnmatchedQuoteIsKept) {
  EXPECT_EQ(ParseStackEnv("A=\"x\n")["A"], "\"x");
}

TEST(ResolveAuthAddrTest, FlagBeatsEverything) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env", "GPUAAS_AUTH_ADDR=file:1\n");
  auto addr = ResolveAuthAddr("flag:1", FakeEnv({{"GPUAAS_AUTH_ADDR", "env:1"}}), dir.path());
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(*addr, "flag:1");
}

TEST(ResolveAuthAddrTest, EnvBeatsStackEnv) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env", "GPUAAS_AUTH_ADDR=file:1\n");
  auto addr = ResolveAuthAddr("", FakeEnv({{"GPUAAS_AUTH_ADDR", "env:1"}}), dir.path());
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(*addr, "env:1");
}

TEST(ResolveAuthAddrTest, FindsStackEnvInAParentDirectory) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env", "GPUAAS_AUTH_ADDR=file:1\n");
  fs::create_directories(dir.path() / "a/b/c");
  auto addr = ResolveAuthAddr("", FakeEnv({}), dir.path() / "a/b/c");
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(*addr, "file:1");
  EXPECT_EQ(FindStackEnv(dir.path() / "a/b"), dir.path() / ".gpuaas/stack.env");
}

TEST(ResolveAuthAddrTest, NearestStackEnvWins) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env", "GPUAAS_AUTH_ADDR=outer:1\n");
  WriteFile(dir.path() / "inner/.gpuaas/stack.env", "GPUAAS_AUTH_ADDR=inner:1\n");
  auto addr = ResolveAuthAddr("", FakeEnv({}), dir.path() / "inner");
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(*addr, "inner:1");
}

TEST(ResolveAuthAddrTest, StackEnvWithoutAuthAddrFallsBackToDefault) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env", "GPUAAS_STOCK_ADDR=x:1\n");
  auto addr = ResolveAuthAddr("", FakeEnv({}), dir.path());
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(*addr, kDefaultAuthAddr);
}

TEST(ResolveAuthAddrTest, DefaultWhenNothingIsSet) {
  TempDir dir;
  auto addr = ResolveAuthAddr("", FakeEnv({}), dir.path());
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(*addr, "localhost:50051");
}

TEST(SettingsTest, TlsFilesComeFromStackEnvUnlessGiven) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env",
            "GPUAAS_AUTH_ADDR=127.0.0.1:50051\nGPUAAS_TLS_CA=/s/ca.crt\n"
            "GPUAAS_TLS_CERT=/s/client.crt\nGPUAAS_TLS_KEY=/s/client.key\n");
  Settings settings(FakeEnv({{"GPUAAS_TLS_CERT", "/env/client.crt"}}), dir.path());
  Endpoint flags;
  flags.tls.key_file = "/flag/client.key";
  auto e = settings.AuthEndpoint(flags);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->addr, "127.0.0.1:50051");
  EXPECT_EQ(e->tls.ca_file, "/s/ca.crt");
  EXPECT_EQ(e->tls.cert_file, "/env/client.crt");
  EXPECT_EQ(e->tls.key_file, "/flag/client.key");
}

TEST(SettingsTest, PlaintextWithoutTlsSettings) {
  TempDir dir;
  Settings settings(FakeEnv({}), dir.path());
  auto e = settings.AuthEndpoint({});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->addr, "localhost:50051");
  EXPECT_TRUE(e->tls.ca_file.empty());
  auto user = settings.Get("", "GPUAAS_ADMIN_USER", "nobody");
  ASSERT_TRUE(user.ok());
  EXPECT_EQ(*user, "nobody");
}

TEST(TokenPathTest, PrefersXdgConfigHome) {
  auto p = TokenPath(FakeEnv({{"XDG_CONFIG_HOME", "/x"}, {"HOME", "/h"}}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, fs::path("/x/gpuaas/token.json"));
}

TEST(TokenPathTest, FallsBackToHome) {
  auto p = TokenPath(FakeEnv({{"HOME", "/h"}}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, fs::path("/h/.config/gpuaas/token.json"));
}

TEST(TokenPathTest, FailsWithoutHome) {
  EXPECT_EQ(TokenPath(FakeEnv({})).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gpuaas::ctl
