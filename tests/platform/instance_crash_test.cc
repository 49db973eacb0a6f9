// Crash drills on the real platform. The instance service is killed with SIGKILL at every step
// of an instance's start and of its stop (its pause hook, GPUAAS_INSTANCE_PAUSE_AT, holds the
// step until the kill, before the step or between its calls and its commit). The stock service
// and the storage service are killed at every step too: the hook holds the step while the
// victim dies, then lets it go on against the dead service. An agent is killed while instances
// start and stop. After the restarts every instance reaches what it was asked for, no stock
// stays claimed without a live instance, no GPU serves two workloads, and every usage interval
// is closed.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/common/files.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

namespace fs = std::filesystem;
using gpuaas::testing::Eventually;

bool Is(const instancepb::Instance& i, instancepb::State state) { return i.state() == state; }

// "" when the file is gone or unreadable: a process may exit while its /proc files are read
// (an istreambuf_iterator then throws ESRCH out of the test).
std::string ReadAll(const fs::path& p) { return ReadFile(p.string()).value_or(""); }

// Whether process `pid` descends from a workload shim of `root` (its command line names its
// directory there): other tests' simulated nodes share this one's name and GPU UUIDs.
bool UnderShimOf(std::string pid, const std::string& root) {
  for (int depth = 0; depth < 8 && pid != "0" && pid != "1"; ++depth) {
    std::string cmdline = ReadAll(fs::path("/proc") / pid / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find("gpuaas-workload-shim") != std::string::npos &&
        cmdline.find(" " + root + "/") != std::string::npos) {
      return true;
    }
    // /proc/<pid>/stat: "pid (comm) state ppid ...", comm may hold spaces.
    const std::string stat = ReadAll(fs::path("/proc") / pid / "stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) return false;
    std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
    if (fields.size() < 2) return false;
    pid = fields[1];
  }
  return false;
}

// The workloads' main processes of this test's agent now running ("sleep" under a sandbox),
// by workload id, with the GPUs each was given.
std::map<std::string, std::set<std::string>> RunningWorkloads(const std::string& root) {
  std::map<std::string, std::set<std::string>> out;
  std::error_code ec;  // entries vanish as processes exit
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (ReadAll(entry.path() / "comm") != "sleep\n") continue;
    if (!UnderShimOf(pid, root)) continue;
    std::string workload;
    std::set<std::string> gpus;
    for (absl::string_view var : absl::StrSplit(ReadAll(entry.path() / "environ"), '\0')) {
      if (absl::ConsumePrefix(&var, "GPUAAS_WORKLOAD_ID=")) workload = std::string(var);
      if (absl::ConsumePrefix(&var, "CUDA_VISIBLE_DEVICES=")) {
        for (absl::string_view gpu : absl::StrSplit(var, ',', absl::SkipEmpty())) {
          gpus.insert(std::string(gpu));
        }
      }
    }
    if (!workload.empty()) out[workload].insert(gpus.begin(), gpus.end());
  }
  return out;
}

// A drill of a service the instance service calls: one instance per pair of pause points is
// started with the victim killed at the first and stopped with it killed at the second.
struct VictimDrill {
  std::set<std::string> victim_steps;  // the steps that call the victim
  std::vector<std::pair<std::string, std::string>> start_and_stop_points;
};

// Before every step of the start and of the stop; at the commit of the steps that change
// something at the victim, which dies right after it answered.
VictimDrill DrillOf(const std::set<std::string>& victim_steps, const std::string& start_commit,
                    const std::string& stop_commit) {
  VictimDrill drill{.victim_steps = victim_steps,
                    .start_and_stop_points = {{"before:begin", "before:unpublish"},
                                              {"before:claim", "before:meter_close"},
                                              {"before:attach", "before:detach"},
                                              {"before:publish", "before:release"},
                                              {"before:meter", "before:finish"}}};
  drill.start_and_stop_points.emplace_back("commit:" + start_commit, "commit:" + stop_commit);
  return drill;
}

class InstanceCrashTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    PlatformOptions options;
    options.agents = {{"node-a", "4xA100-80GB"}};
    // Longer than any drill keeps the stock service down, agent reconnection included: a stock
    // service back after its nodes' heartbeats went stale places nothing until the agent
    // reports again, and a claim then fails the instance NO_CAPACITY (seen under ASan, where
    // the restart and the agent's backoff outlast the stack's usual 5 s).
    options.stock_node_timeout_seconds = 30;
    // The workloads' `sleep` is their sandbox's pid 1, which SIGTERM does not end: every stop
    // would wait out the whole grace period (10 s) before its SIGKILL.
    options.instance_flags = {"--stop-grace-seconds=1"};
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    token_ = stack_->CreateTenant("drills");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 4);
    stack_->CreateStorage(token_, "drill-data");
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  // A storage takes one writer at a time: a second instance beside a running one mounts it
  // `read_only`.
  void Create(const std::string& id, bool read_only = false) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(id);
    req.set_spec_name("a100.1x");
    req.set_storage_id("drill-data");
    req.mutable_template_()->set_cmd("exec sleep 3600");
    instancepb::Volume* volume = req.mutable_template_()->add_volumes();
    volume->set_name("data");
    volume->set_mount_path("/data");
    volume->set_sub_path(id);
    volume->set_read_only(read_only);
    instancepb::Instance out;
    grpc::Status s =
        stack_->instances().CreateInstance(PlatformStack::Ctx(token_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  void Stop(const std::string& id) {
    instancepb::StopInstanceRequest req;
    req.set_instance_id(id);
    instancepb::Instance out;
    grpc::Status s = stack_->instances().StopInstance(PlatformStack::Ctx(token_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  instancepb::Instance WaitFor(const std::string& id, instancepb::State state,
                               absl::Duration timeout = absl::Seconds(60)) {
    return stack_->WaitInstance(
        token_, id, [state](const auto& i) { return Is(i, state); }, timeout);
  }

  // Restarts the instance service with its pause hook at `points` ("<when>:<step>", each
  // pausing the first instance that reaches it).
  void ArmPauses(const std::vector<std::string>& points) {
    marker_ = dir_.path() / absl::StrCat("paused-", ++armed_);
    Daemon& service = stack_->instance();
    service.Kill();
    service.set_env({"GPUAAS_INSTANCE_PAUSE_AT=" + absl::StrJoin(points, ","),
                     "GPUAAS_INSTANCE_PAUSE_MARKER=" + marker_.string()});
    service.Start();
  }

  // Waits until the instance service pauses at the point `at`. Returns the id of the instance
  // there; the pause holds until the marker file is deleted (ReleasePause) or the service ends.
  // Returns "" when it never paused (the test has failed).
  std::string AwaitPause(const std::string& at) {
    if (Eventually([&] { return fs::exists(marker_); }, absl::Seconds(60))) {
      return std::string(absl::StripAsciiWhitespace(ReadAll(marker_)));
    }
    ADD_FAILURE() << "never paused at " << at << "\n" << stack_->instance().Log();
    return "";
  }

  void ReleasePause() { fs::remove(marker_); }

  // Kills the instance service paused at "<when>:<step>" as `act` reaches it, and starts it
  // again without the hook.
  void KillAt(const std::string& when, const std::string& step, const std::function<void()>& act) {
    const std::string at = absl::StrCat(when, ":", step);
    ArmPauses({at});
    act();
    AwaitPause(at);
    Daemon& service = stack_->instance();
    service.Kill();
    service.set_env({});
    service.Start();
  }

  // Kills `victim` while the instance service is paused at `at` (armed by ArmPauses) as `act`
  // reaches it, then lets the step go on against the dead victim and starts the victim again a
  // moment later: the step, or the next one that calls the victim, fails and backs off until it
  // is back. A paused step that calls the victim itself (`victim_steps`) is seen to fail first.
  void KillVictimAt(Daemon& victim, const std::set<std::string>& victim_steps,
                    const std::string& at, const std::function<void()>& act) {
    act();
    const std::string instance_id = AwaitPause(at);
    if (instance_id.empty()) return;
    victim.Kill();
    ReleasePause();
    const std::pair<std::string, std::string> when_step = absl::StrSplit(at, ':');
    if (when_step.first == "before" && victim_steps.count(when_step.second)) {
      const std::string failed =
          absl::StrCat("instance ", instance_id, ": step ", when_step.second, " failed");
      EXPECT_TRUE(Eventually([&] { return absl::StrContains(stack_->instance().Log(), failed); },
                             absl::Seconds(30)))
          << "no \"" << failed << "\" against the dead " << victim.name();
    } else {
      absl::SleepFor(absl::Milliseconds(300));
    }
    victim.Start();
  }

  // No GPU in two workloads, and a workload's GPUs are those of its instance's claimed stock
  // (else they could be placed again); the `live` instances (those that want to run) hold a
  // claimed stock each, and no other instance holds one.
  void CheckInvariants(const std::set<std::string>& live) {
    const std::map<std::string, stockpb::Stock> claimed = stack_->ClaimedStocks();
    std::map<std::string, std::string> owner;
    for (const auto& [workload, gpus] : RunningWorkloads(root())) {
      const auto stock = claimed.find(workload.substr(0, workload.rfind('.')));
      for (const std::string& gpu : gpus) {
        auto [it, fresh] = owner.emplace(gpu, workload);
        EXPECT_TRUE(fresh) << gpu << " serves " << it->second << " and " << workload;
        EXPECT_TRUE(stock != claimed.end() && absl::c_linear_search(stock->second.gpu_uuids(), gpu))
            << gpu << " serves " << workload << " but its instance holds no stock with it";
      }
    }
    for (const auto& [instance_id, stock] : claimed) {
      EXPECT_TRUE(live.count(instance_id))
          << "stock " << stock.stock_id() << " still claimed by " << instance_id;
    }
    for (const std::string& instance_id : live) {
      EXPECT_TRUE(claimed.count(instance_id)) << instance_id << " holds no claimed stock";
    }
  }

  void CheckUsageClosed() {
    instancepb::ListUsageRequest req;
    req.set_page_size(1000);
    instancepb::ListUsageResponse usage;
    grpc::Status s = stack_->instances().ListUsage(PlatformStack::Ctx(token_).get(), req, &usage);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_GT(usage.records_size(), 0);
    for (const auto& r : usage.records()) {
      EXPECT_TRUE(r.has_end_time()) << "open interval: " << r.DebugString();
    }
  }

  // Stocks are claimable again once the agent's heartbeats reach a restarted stock service.
  void WaitForAvailableStocks(int n) {
    EXPECT_TRUE(Eventually(
        [&] {
          stockpb::ListStocksRequest req;
          req.set_state(stockpb::STOCK_STATE_AVAILABLE);
          req.set_page_size(500);
          stockpb::ListStocksResponse resp;
          return stack_->stock_stub()
                     .ListStocks(PlatformStack::Ctx(stack_->admin_token()).get(), req, &resp)
                     .ok() &&
                 resp.stocks_size() >= n;
        },
        absl::Seconds(60)))
        << "fewer than " << n << " stocks available";
  }

  std::string root() const { return stack_->workload_root("node-a").string(); }

  // Whether `workload_id`'s process runs, waiting for it a little: RUNNING says the sandbox is
  // up, the workload's own command may still be on its way in.
  bool WorkloadRuns(const std::string& workload_id) {
    return Eventually([&] { return RunningWorkloads(root()).count(workload_id) == 1; },
                      absl::Seconds(10));
  }

  // Starts and stops instances with `victim` killed at each of `drill`'s pause points.
  void RunVictimDrill(Daemon& victim, const VictimDrill& drill) {
    int n = 0;
    for (const auto& [start_at, stop_at] : drill.start_and_stop_points) {
      const std::string id = absl::StrCat(victim.name(), "-", n++);
      ArmPauses({start_at, stop_at});
      {
        SCOPED_TRACE(id + ": " + victim.name() + " killed at " + start_at);
        KillVictimAt(victim, drill.victim_steps, start_at, [&] { Create(id); });
        EXPECT_EQ(WaitFor(id, instancepb::STATE_RUNNING).state(), instancepb::STATE_RUNNING);
        CheckInvariants({id});
        EXPECT_TRUE(WorkloadRuns(id + ".1")) << "one workload for the run";
      }
      {
        SCOPED_TRACE(id + ": " + victim.name() + " killed at " + stop_at);
        KillVictimAt(victim, drill.victim_steps, stop_at, [&] { Stop(id); });
        EXPECT_EQ(WaitFor(id, instancepb::STATE_STOPPED).state(), instancepb::STATE_STOPPED);
        CheckInvariants({});
        EXPECT_EQ(RunningWorkloads(root()).count(id + ".1"), 0u) << "the workload is gone";
      }
    }
    CheckUsageClosed();
    WaitForAvailableStocks(4);
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string token_;
  // The pause hook's marker file (ArmPauses), and how many times the hook was armed.
  fs::path marker_;
  int armed_ = 0;
};

const std::vector<std::string> kWhens = {"before", "commit"};

TEST_F(InstanceCrashTest, InstanceServiceKilledAtEveryStepOfAStartResumes) {
  int n = 0;
  for (const std::string step : {"begin", "claim", "attach", "publish", "meter"}) {
    for (const std::string& when : kWhens) {
      const std::string id = absl::StrCat("start-", n++);
      SCOPED_TRACE(id + " killed " + when + " " + step);
      KillAt(when, step, [&] { Create(id); });
      EXPECT_EQ(WaitFor(id, instancepb::STATE_RUNNING).state(), instancepb::STATE_RUNNING);
      CheckInvariants({id});
      EXPECT_TRUE(WorkloadRuns(id + ".1")) << "one workload for the run";
      Stop(id);
      EXPECT_EQ(WaitFor(id, instancepb::STATE_STOPPED).state(), instancepb::STATE_STOPPED);
      CheckInvariants({});
    }
  }
  CheckUsageClosed();
}

TEST_F(InstanceCrashTest, InstanceServiceKilledAtEveryStepOfAStopResumes) {
  int n = 0;
  for (const std::string step : {"unpublish", "meter_close", "detach", "release", "finish"}) {
    for (const std::string& when : kWhens) {
      const std::string id = absl::StrCat("stop-", n++);
      SCOPED_TRACE(id + " killed " + when + " " + step);
      Create(id);
      ASSERT_EQ(WaitFor(id, instancepb::STATE_RUNNING).state(), instancepb::STATE_RUNNING);
      KillAt(when, step, [&] { Stop(id); });
      EXPECT_EQ(WaitFor(id, instancepb::STATE_STOPPED).state(), instancepb::STATE_STOPPED);
      CheckInvariants({});
      EXPECT_EQ(RunningWorkloads(root()).count(id + ".1"), 0u) << "the workload is gone";
    }
  }
  CheckUsageClosed();
}

TEST_F(InstanceCrashTest, StockServiceKilledAtEveryStepOfAStartAndOfAStop) {
  RunVictimDrill(stack_->stock(), DrillOf({"claim", "meter", "release"}, "claim", "release"));
}

TEST_F(InstanceCrashTest, StorageServiceKilledAtEveryStepOfAStartAndOfAStop) {
  RunVictimDrill(stack_->storage(), DrillOf({"attach", "detach"}, "attach", "detach"));
}

// Every replica down for longer than the node timeout (30 s): the agents could not report, so
// their silence says nothing of their nodes, and the running instance must survive the restart.
TEST_F(InstanceCrashTest, AnOutageLongerThanTheNodeTimeoutLosesNoInstance) {
  Create("outage-1");
  ASSERT_EQ(WaitFor("outage-1", instancepb::STATE_RUNNING).state(), instancepb::STATE_RUNNING);
  ASSERT_TRUE(WorkloadRuns("outage-1.1"));
  const auto before = RunningWorkloads(root());
  Daemon& service = stack_->instance();
  service.Kill();
  absl::SleepFor(absl::Seconds(33));
  service.Start();
  // Past the restarted replica's own node timeout, with the agent reporting again.
  absl::SleepFor(absl::Seconds(33));
  const instancepb::Instance after = WaitFor("outage-1", instancepb::STATE_RUNNING);
  EXPECT_EQ(after.state(), instancepb::STATE_RUNNING) << after.message();
  for (const instancepb::Event& e : after.events()) {
    EXPECT_NE(e.state(), instancepb::STATE_FAILED) << e.message();
  }
  EXPECT_EQ(RunningWorkloads(root()), before);
  CheckInvariants({"outage-1"});
}

TEST_F(InstanceCrashTest, AnAgentKilledAtEachStageAdoptsOrConverges) {
  Daemon& agent = stack_->agent("node-a");
  // Killed while its workload runs: the restarted agent adopts it, nothing starts twice.
  Create("agent-1");
  ASSERT_EQ(WaitFor("agent-1", instancepb::STATE_RUNNING).state(), instancepb::STATE_RUNNING);
  ASSERT_TRUE(WorkloadRuns("agent-1.1"));
  const auto before = RunningWorkloads(root());
  agent.Kill();
  agent.Start();
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(WaitFor("agent-1", instancepb::STATE_RUNNING).state(), instancepb::STATE_RUNNING);
  EXPECT_EQ(RunningWorkloads(root()), before) << "the same workloads, none started twice";

  // Killed right as a start is published: the restarted agent starts it once.
  Create("agent-2", /*read_only=*/true);
  agent.Kill();
  absl::SleepFor(absl::Seconds(1));
  agent.Start();
  EXPECT_EQ(WaitFor("agent-2", instancepb::STATE_RUNNING).state(), instancepb::STATE_RUNNING);
  EXPECT_TRUE(WorkloadRuns("agent-2.1"));

  // Killed before a stop: the instance waits in STOPPING, then the agent's set says stop.
  agent.Kill();
  Stop("agent-1");
  Stop("agent-2");
  absl::SleepFor(absl::Seconds(1));
  agent.Start();
  EXPECT_EQ(WaitFor("agent-1", instancepb::STATE_STOPPED).state(), instancepb::STATE_STOPPED);
  EXPECT_EQ(WaitFor("agent-2", instancepb::STATE_STOPPED).state(), instancepb::STATE_STOPPED);
  EXPECT_TRUE(Eventually([this] { return RunningWorkloads(root()).empty(); }, absl::Seconds(20)));
  CheckInvariants({});
  CheckUsageClosed();
}

}  // namespace
}  // namespace gpuaas::platform_testing
