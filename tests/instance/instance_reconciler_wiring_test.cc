// gpuaas-instance as its main.cc builds it from flags (InstanceApp): the back half serves
// NodeWorkloadService and drives an instance to RUNNING with the service's own API key.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "libs/testing/eventually.h"
#include "libs/testing/status_matchers.h"
#include "services/instance/app.h"
#include "tests/common/loopback_flags.h"
#include "tests/instance/reconciler_test_base.h"

namespace gpuaas::instance::testing {
namespace {

class WiringTest : public ReconcilerTest {};

TEST_F(WiringTest, BackHalfFromFlagsDrivesAnInstance) {
  const std::string key_file = (dir_.path() / "api.key").string();
  std::ofstream(key_file) << stack_->CreateApiKey(service_, "wired", common::v1::ROLE_SERVICE);

  CLI::App cli;
  BackHalfFlags flags;
  AddBackHalfFlags(cli, "instance", flags);
  const std::vector<std::string> args = {"--stock-addr",         stock_->address(),
                                         "--storage-addr",       storage_->address(),
                                         "--api-key-file",       key_file,
                                         "--reconciler-workers", "2",
                                         "--stop-grace-seconds", "4"};
  std::vector<const char*> argv = {"gpuaas-instance"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  ASSERT_NO_THROW(cli.parse(static_cast<int>(argv.size()), argv.data()));
  EXPECT_EQ(flags.node_timeout_seconds, 30);
  EXPECT_EQ(flags.busy_gpu_percent, 5);

  // gpuaas-instance's whole wiring (InstanceApp) with those flags, on a free port.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<InstanceApp> app,
                       InstanceApp::Create({.common = gpuaas::testing::LoopbackServiceFlags(dsn()),
                                            .auth_addr = stack_->address(),
                                            .back = flags}));
  ASSERT_OK(app->Start());
  std::vector<std::unique_ptr<FakeAgent>> agents;
  for (int i = 0; i < Nodes(); ++i) {
    agents.push_back(std::make_unique<FakeAgent>("127.0.0.1:" + std::to_string(app->port()),
                                                 stack_->AgentToken("node-" + std::to_string(i)),
                                                 "node-" + std::to_string(i)));
  }
  pb::Template t;
  t.set_cmd("sleep infinity");
  Insert("web", {.tmpl = t});
  app->back_half().reconciler().Kick();
  EXPECT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  bool seen = false;
  for (const auto& agent : agents) {
    auto running = agent->running();
    if (running.count("web.1")) {
      seen = true;
      EXPECT_EQ(running.at("web.1").stop_grace_period().seconds(), 4);
    }
  }
  EXPECT_TRUE(seen);
  agents.clear();
  app->Stop();
}

TEST(PauseHookFromEnvTest, ParsesWhenAndStep) {
  unsetenv("GPUAAS_INSTANCE_PAUSE_AT");
  auto none = PauseHookFromEnv();
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  setenv("GPUAAS_INSTANCE_PAUSE_AT", "commit:claim", 1);
  auto hook = PauseHookFromEnv();
  ASSERT_TRUE(hook.ok());
  EXPECT_NE(*hook, nullptr);
  setenv("GPUAAS_INSTANCE_PAUSE_AT", "before:claim,commit:release", 1);
  auto two = PauseHookFromEnv();
  EXPECT_TRUE(two.ok() && *two != nullptr);
  setenv("GPUAAS_INSTANCE_PAUSE_AT", "before:claim,", 1);
  EXPECT_EQ(PauseHookFromEnv().status().code(), absl::StatusCode::kInvalidArgument);
  setenv("GPUAAS_INSTANCE_PAUSE_AT", "during:claim", 1);
  EXPECT_EQ(PauseHookFromEnv().status().code(), absl::StatusCode::kInvalidArgument);
  setenv("GPUAAS_INSTANCE_PAUSE_AT", "before:nap", 1);
  EXPECT_EQ(PauseHookFromEnv().status().code(), absl::StatusCode::kInvalidArgument);
  unsetenv("GPUAAS_INSTANCE_PAUSE_AT");
}

// The pause GPUAAS_INSTANCE_PAUSE_AT installs, from the environment of this test's process.
std::unique_ptr<StepHook> PauseHook(const std::string& at, const std::string& marker) {
  setenv("GPUAAS_INSTANCE_PAUSE_AT", at.c_str(), 1);
  setenv("GPUAAS_INSTANCE_PAUSE_MARKER", marker.c_str(), 1);
  absl::StatusOr<std::unique_ptr<StepHook>> hook = PauseHookFromEnv();
  unsetenv("GPUAAS_INSTANCE_PAUSE_AT");
  unsetenv("GPUAAS_INSTANCE_PAUSE_MARKER");
  EXPECT_TRUE(hook.ok()) << hook.status();
  return hook.ok() ? *std::move(hook) : nullptr;
}

TEST(PauseHookTest, DeletingTheMarkerLetsThePausedStepGoOnOnce) {
  ::gpuaas::testing::TempDir dir;
  const std::filesystem::path marker = dir.path() / "paused";
  std::unique_ptr<StepHook> hook = PauseHook("before:claim", marker.string());
  ASSERT_NE(hook, nullptr);
  StopSignal stopping;
  EXPECT_OK(hook->BeforeStep("web", Step::kBegin, stopping));
  EXPECT_OK(hook->BeforeCommit("web", Step::kClaim, stopping));
  std::thread releaser([&] {
    EXPECT_TRUE(::gpuaas::testing::Eventually([&] { return std::filesystem::exists(marker); }));
    std::string written;
    std::ifstream(marker) >> written;
    EXPECT_EQ(written, "web");
    std::filesystem::remove(marker);
  });
  EXPECT_OK(hook->BeforeStep("web", Step::kClaim, stopping));
  releaser.join();
  // Spent: the next instance at the step goes on at once.
  EXPECT_OK(hook->BeforeStep("db", Step::kClaim, stopping));
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(PauseHookTest, EachPointPausesOnce) {
  ::gpuaas::testing::TempDir dir;
  const std::filesystem::path marker = dir.path() / "paused";
  std::unique_ptr<StepHook> hook = PauseHook("before:claim,commit:release", marker.string());
  ASSERT_NE(hook, nullptr);
  StopSignal stopping;
  for (const auto& [at_commit, step] :
       {std::pair(false, Step::kClaim), std::pair(true, Step::kRelease)}) {
    std::thread releaser([&] {
      EXPECT_TRUE(::gpuaas::testing::Eventually([&] { return std::filesystem::exists(marker); }));
      std::filesystem::remove(marker);
    });
    EXPECT_OK(at_commit ? hook->BeforeCommit("web", step, stopping)
                        : hook->BeforeStep("web", step, stopping));
    releaser.join();
  }
  EXPECT_OK(hook->BeforeStep("db", Step::kClaim, stopping));
  EXPECT_OK(hook->BeforeCommit("db", Step::kRelease, stopping));
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(PauseHookTest, APauseWithoutAMarkerLastsUntilTheReconcilerStops) {
  std::unique_ptr<StepHook> hook = PauseHook("commit:release", "");
  ASSERT_NE(hook, nullptr);
  StopSignal stopping;
  std::thread stopper([&] {
    absl::SleepFor(absl::Milliseconds(100));
    stopping.Stop();
  });
  EXPECT_EQ(hook->BeforeCommit("web", Step::kRelease, stopping).code(), absl::StatusCode::kAborted);
  stopper.join();
}

}  // namespace
}  // namespace gpuaas::instance::testing
