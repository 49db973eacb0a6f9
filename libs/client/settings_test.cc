#include "libs/client/settings.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"

namespace gpuaas::client {
namespace {

namespace fs = std::filesystem;
using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::TempDir;

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

TEST(ParseStackEnvTest, LaterKeyWins) { EXPECT_EQ(ParseStackEnv("A=1\nA=2\n")["A"], "2"); }

TEST(ParseStackEnvTest, UnmatchedQuoteIsKept) { EXPECT_EQ(ParseStackEnv("A=\"x\n")["A"], "\"x"); }

TEST(MapEnvTest, EmptyValuesCountAsUnset) {
  EnvLookup env = MapEnv({{"SET", "x"}, {"EMPTY", ""}});
  EXPECT_EQ(env("SET"), "x");
  EXPECT_EQ(env("EMPTY"), std::nullopt);
  EXPECT_EQ(env("MISSING"), std::nullopt);
}

TEST(SettingsTest, FlagBeatsEverything) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env", "V=file\n");
  Settings settings(MapEnv({{"V", "env"}}), dir.path());
  EXPECT_THAT(settings.Get("flag", "V", "default"), IsOkAndHolds("flag"));
}

TEST(SettingsTest, EnvBeatsStackEnv) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env", "V=file\n");
  Settings settings(MapEnv({{"V", "env"}}), dir.path());
  EXPECT_THAT(settings.Get("", "V", "default"), IsOkAndHolds("env"));
}

TEST(SettingsTest, FindsStackEnvInAParentDirectory) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env", "V=file\n");
  fs::create_directories(dir.path() / "a/b/c");
  Settings settings(MapEnv({}), dir.path() / "a/b/c");
  EXPECT_THAT(settings.Get("", "V", "default"), IsOkAndHolds("file"));
  EXPECT_EQ(FindStackEnv(dir.path() / "a/b"), dir.path() / ".gpuaas/stack.env");
}

TEST(SettingsTest, NearestStackEnvWins) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env", "V=outer\n");
  WriteFile(dir.path() / "inner/.gpuaas/stack.env", "V=inner\n");
  Settings settings(MapEnv({}), dir.path() / "inner");
  EXPECT_THAT(settings.Get("", "V"), IsOkAndHolds("inner"));
}

TEST(SettingsTest, DefaultWhenNothingIsSet) {
  TempDir dir;
  WriteFile(dir.path() / ".gpuaas/stack.env", "OTHER=x\nV=\n");
  Settings settings(MapEnv({}), dir.path());
  EXPECT_THAT(settings.Get("", "V", "default"), IsOkAndHolds("default"));
  EXPECT_THAT(settings.Get("", "MISSING"), IsOkAndHolds(""));
}

}  // namespace
}  // namespace gpuaas::client
