#include "libs/service/lifecycle.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "libs/common/stop_signal.h"

namespace gpuaas::service {
namespace {

TEST(TerminationSignals, ASignalSentWhileStartingWaitsForWait) {
  TerminationSignals signals("test");
  ASSERT_EQ(kill(getpid(), SIGTERM), 0);  // blocked: pending, not fatal
  EXPECT_EQ(signals.Wait(), SIGTERM);
}

TEST(TerminationSignals, ServeUntilStoppedDrainsTheServerOnSigint) {
  TerminationSignals signals("test");
  rpc::Server server({.name = "test", .listen_address = "127.0.0.1:0", .metrics_address = ""},
                     nullptr);
  ASSERT_EQ(kill(getpid(), SIGINT), 0);
  EXPECT_EQ(ServeUntilStopped({.name = "test"}, server, signals), 0);
  EXPECT_GT(server.port(), 0);
}

TEST(TerminationSignals, ASecondSignalKillsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // earlier tests left gRPC's threads
  EXPECT_EXIT(
      {
        TerminationSignals signals("test");
        kill(getpid(), SIGTERM);
        signals.Wait();
        kill(getpid(), SIGTERM);
        pause();
      },
      ::testing::KilledBySignal(SIGTERM), "");
}

TEST(TerminationSignals, ServeUntilStoppedFailsOnATakenPort) {
  TerminationSignals signals("test");
  rpc::Server first({.name = "test", .listen_address = "127.0.0.1:0", .metrics_address = ""},
                    nullptr);
  ASSERT_TRUE(first.Start().ok());
  rpc::Server second({.name = "test",
                      .listen_address = "127.0.0.1:" + std::to_string(first.port()),
                      .metrics_address = ""},
                     nullptr);
  EXPECT_EQ(ServeUntilStopped({.name = "test"}, second, signals), 1);
}

struct TestFlags {
  ProcessFlags process;
  int answer = 0;
};

void DefineTestFlags(CLI::App& app, TestFlags& f) {
  AddProcessFlags(app, {.name = "test"}, ServerKind::kGrpc, f.process);
  app.add_option("--answer", f.answer);
}

int RunTest(const TestFlags& f, TerminationSignals&) { return f.answer; }

int RunWith(std::vector<std::string> args) {
  args.insert(args.begin(), "test");
  std::vector<char*> argv;
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  return RunProcess(static_cast<int>(argv.size()), argv.data(), {.name = "test"}, DefineTestFlags,
                    RunTest);
}

TEST(RunProcess, ParsesChecksAndRuns) {
  EXPECT_EQ(RunWith({"--answer=42", "--log-level=warn"}), 42);
  EXPECT_EQ(RunWith({"--answer=42", "--tls-require-client-cert"}), 2);  // no --tls-ca
  EXPECT_NE(RunWith({"--workers=0"}), 0);                               // CLI11's range check
}

TEST(LoopThread, StopsAndJoinsWhenDestroyed) {
  StopSignal stop;
  bool returned = false;
  {
    LoopThread loop(
        [&] {
          stop.Wait();
          returned = true;
        },
        [&] { stop.Stop(); });
  }
  EXPECT_TRUE(returned);
}

}  // namespace
}  // namespace gpuaas::service
