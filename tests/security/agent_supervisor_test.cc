// An agent that dies (a crash, the OOM killer, kill -9) is started again (issue 32): nothing
// else would restart it, and every tenant's instances on its node would lose their starts,
// stops and logs. `tools/gpuaas up` runs each agent under tools/supervise (the systemd units in
// tools/systemd do the same with Restart=on-failure); this runs the real agent under it.
#include <signal.h>
#include <sys/types.h>

#include <filesystem>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "libs/common/files.h"
#include "libs/testing/eventually.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/child_process.h"

namespace gpuaas::testing {
namespace {

namespace fs = std::filesystem;

pid_t ReadPid(const fs::path& file) {
  pid_t pid = 0;
  const std::string text = ReadFile(file.string()).value_or("");
  return absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &pid) ? pid : 0;
}

bool Alive(pid_t pid) { return pid > 0 && ::kill(pid, 0) == 0; }

TEST(AgentSupervisorTest, AKilledAgentComesBackAndAStoppedOneStaysDown) {
  TempDir temp;
  const fs::path pids = temp.path() / "pids";
  const std::string address = absl::StrCat("127.0.0.1:", FreePort());
  // An agent of a node with no control plane yet (it retries the stock service quietly) and no
  // workloads: it serves its health at once.
  ChildProcess supervisor(
      {GPUAAS_SUPERVISE, "agent-sim", pids.string(), "--", GPUAAS_AGENT_BINARY, "--node-id=sim",
       "--simulate-gpus=1xT4", "--listen=" + address, "--metrics-listen=127.0.0.1:0",
       "--stock-addr=127.0.0.1:1", "--instance-addr=none", "--runtime=process",
       "--workload-root=" + (temp.path() / "workloads").string(),
       "--image-root=" + (temp.path() / "images").string()},
      (temp.path() / "supervise.log").string());
  ASSERT_TRUE(WaitServing(address))
      << ReadFile((temp.path() / "supervise.log").string()).value_or("");
  const pid_t first = ReadPid(pids / "agent-sim.child");
  ASSERT_TRUE(Alive(first));
  EXPECT_EQ(ReadPid(pids / "agent-sim.restarts"), 0);

  ASSERT_EQ(::kill(first, SIGKILL), 0);
  ASSERT_TRUE(Eventually([&] {
    const pid_t now = ReadPid(pids / "agent-sim.child");
    return now != first && Alive(now);
  }));
  EXPECT_TRUE(WaitServing(address))
      << ReadFile((temp.path() / "supervise.log").string()).value_or("");
  EXPECT_EQ(ReadPid(pids / "agent-sim.restarts"), 1);

  // A stop (SIGTERM to the supervisor, as `tools/gpuaas down` sends) ends the agent for good.
  const pid_t second = ReadPid(pids / "agent-sim.child");
  supervisor.Terminate();
  EXPECT_FALSE(Alive(second));
  EXPECT_FALSE(supervisor.Running());
}

}  // namespace
}  // namespace gpuaas::testing
