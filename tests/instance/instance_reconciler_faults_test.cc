// The reconciler when things go wrong or run long: node loss, auto-stop, two reconcilers on one
// database, a reconciler that dies mid-chain (or between a call and its commit) and another that
// resumes.
#include <gtest/gtest.h>

#include <atomic>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/notification.h"
#include "libs/testing/eventually.h"
#include "tests/instance/reconciler_test_base.h"

namespace gpuaas::instance::testing {
namespace {

using ::gpuaas::testing::Eventually;

pb::Template Sleeper() {
  pb::Template t;
  t.set_cmd("sleep infinity");
  return t;
}

pb::Template WithVolume() {
  pb::Template t = Sleeper();
  pb::Volume* v = t.add_volumes();
  v->set_name("data");
  v->set_mount_path("/data");
  return t;
}

class FaultsTest : public ReconcilerTest {
 protected:
  void TearDown() override {
    agents_.clear();
    ReconcilerTest::TearDown();
  }
  void StartAgents() {
    for (int i = 0; i < Nodes(); ++i) agents_.push_back(Agent("node-" + std::to_string(i)));
  }
  std::vector<std::unique_ptr<FakeAgent>> agents_;
};

// --- Node loss.

class NodeLossTest : public FaultsTest {
 protected:
  ReconcilerOptions Options() override {
    ReconcilerOptions o = ReconcilerTest::Options();
    o.node_timeout = absl::Seconds(2);
    return o;
  }
};

// The node of a running instance goes away (its agent and, as the stock service sees it, its
// stock): the instance starts again as a new run on the other node, with its storage; the lost
// run's usage ends at the node's last_seen and nothing stays claimed or attached for it.
TEST_F(NodeLossTest, InstancesOfALostNodeStartAgainOnAnotherWithTheirStorage) {
  StartAgents();
  StartReconciler();
  Insert("web", {.storage_id = "vol", .tmpl = WithVolume()});
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  const WorkRow before = Row("web");
  const std::string node = before.node_id;
  Exec("UPDATE stock.nodes SET ready = false WHERE node_id = '" + node + "'");
  agents_[std::stoi(node.substr(5))]->Disconnect();  // "node-N": the agent goes away
  {  // Spare stock on the other node (the placement packed SetUp's onto one).
    stock::v1::CordonNodeRequest cordon;
    cordon.set_node_id(node);
    stock::v1::Node cordoned;
    ASSERT_TRUE(stock_->stub()
                    .CordonNode(auth::testing::AuthStack::Ctx(admin_).get(), cordon, &cordoned)
                    .ok());
    stock::v1::CreateStocksRequest req;
    req.set_spec_name(kSpec);
    req.set_number(1);
    stock::v1::CreateStocksResponse out;
    grpc::Status s =
        stock_->stub().CreateStocks(auth::testing::AuthStack::Ctx(admin_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  ASSERT_TRUE(WaitFor("web", [&](const WorkRow& r) {
    return r.state == pb::STATE_RUNNING && r.run == before.run + 1 && r.held_run == r.run;
  }));
  const WorkRow r = Row("web");
  EXPECT_NE(r.node_id, node);
  EXPECT_EQ(r.reason, pb::REASON_UNSPECIFIED) << r.message;
  EXPECT_EQ(ClaimedStocks(), 1);
  EXPECT_EQ(AttachedTo(), std::vector<std::string>{"web"});
  absl::StatusOr<absl::Time> last_seen = pool_->Read<absl::Time>("test.last_seen",
                                                                 [&](db::Tx& tx)
                                                                     -> absl::StatusOr<absl::Time> {
                                                                   return tx
            .Exec("SELECT " GPUAAS_SQL_MICROS("last_seen") " FROM instance.nodes WHERE node_id = $1",
                  node)
            .First()
            ->GetTime(0);
                                                                 });
  ASSERT_TRUE(last_seen.ok());
  const std::vector<UsageRow> usage = Usage("web");
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].node_id, node);
  ASSERT_TRUE(usage[0].end.has_value());
  EXPECT_LE(*usage[0].end, *last_seen + absl::Microseconds(1));
  EXPECT_EQ(usage[1].node_id, r.node_id);
  EXPECT_FALSE(usage[1].end.has_value());
  // Why it moved is in its events.
  absl::StatusOr<int64_t> moved =
      pool_->Read<int64_t>("test.events", [&](db::Tx& tx) -> absl::StatusOr<int64_t> {
        return tx
            .Exec(
                "SELECT count(*) FROM instance.events WHERE instance_id = 'web' AND state = 1 "
                "AND reason = 4 AND message LIKE '%starting again on another node'")
            .First()
            ->Get<int64_t>(0);
      });
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, 1);
}

// A run the node never started (it went away before, or never came) fails: starting it again
// on another node is the user's call.
TEST_F(NodeLossTest, ANodeThatNeverShowsUpIsLostToo) {
  StartReconciler();  // no agents at all
  Insert("web", {.tmpl = Sleeper()});
  ASSERT_TRUE(WaitFor(
      "web", [](const WorkRow& r) { return r.state == pb::STATE_FAILED && r.held_run == 0; }));
  EXPECT_EQ(Row("web").reason, pb::REASON_NODE_LOST);
  EXPECT_TRUE(Usage("web").empty()) << "it never ran";
  EXPECT_EQ(ClaimedStocks(), 0);
}

// --- Auto-stop.

TEST_F(FaultsTest, MaxRunTimeStopsNeverDeletes) {
  StartAgents();
  StartReconciler();
  Insert("web", {.tmpl = Sleeper(), .max_run_time_s = 1});
  ASSERT_TRUE(WaitForState("web", pb::STATE_STOPPED));
  const WorkRow r = Row("web");
  EXPECT_EQ(r.reason, pb::REASON_MAX_RUN_TIME);
  EXPECT_EQ(r.desired, pb::DESIRED_STATE_STOPPED);
  EXPECT_FALSE(r.delete_time.has_value());
  EXPECT_EQ(ClaimedStocks(), 0);
  const std::vector<UsageRow> usage = Usage("web");
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_GE(*usage[0].end - usage[0].start, absl::Seconds(1));
}

TEST_F(FaultsTest, IdleGpusStopTheInstance) {
  StartAgents();  // reports 0 % utilization
  StartReconciler();
  Insert("web", {.tmpl = Sleeper(), .idle_timeout_s = 1});
  ASSERT_TRUE(WaitForState("web", pb::STATE_STOPPED));
  EXPECT_EQ(Row("web").reason, pb::REASON_IDLE_TIMEOUT);
  EXPECT_EQ(Row("web").desired, pb::DESIRED_STATE_STOPPED);
}

TEST_F(FaultsTest, BusyGpusKeepTheInstanceActive) {
  StartAgents();
  StartReconciler();
  Insert("web", {.tmpl = Sleeper(), .idle_timeout_s = 3600});
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  const WorkRow before = Row("web");
  ASSERT_TRUE(before.last_active_time.has_value());
  EXPECT_EQ(before.last_active_time, before.start_time) << "the idle window starts at the start";
  FakeAgent& agent = *agents_[std::stoi(before.node_id.substr(5))];
  pb::WorkloadStatus busy =
      FakeAgent::StatusOf(agent.running().at("web.1"), pb::WORKLOAD_STATE_RUNNING);
  busy.set_gpu_utilization_percent(60);
  ASSERT_TRUE(agent.Report({busy}).ok());
  const WorkRow after = Row("web");
  EXPECT_GT(*after.last_active_time, *before.last_active_time);
  EXPECT_EQ(after.state, pb::STATE_RUNNING);
}

// --- Several reconcilers, and crashes.

// Counts how many workers are inside a step of each instance at once.
class ExclusionHook final : public StepHook {
 public:
  absl::Status BeforeStep(std::string_view id, Step, const StopSignal&) override {
    absl::MutexLock lock(&mu_);
    if (++inside_[std::string(id)] > 1) ++overlaps_;
    ++steps_;
    return absl::OkStatus();
  }
  absl::Status BeforeCommit(std::string_view id, Step, const StopSignal&) override {
    absl::MutexLock lock(&mu_);
    --inside_[std::string(id)];
    return absl::OkStatus();
  }
  int overlaps() {
    absl::MutexLock lock(&mu_);
    return overlaps_;
  }
  int steps() {
    absl::MutexLock lock(&mu_);
    return steps_;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, int> inside_ ABSL_GUARDED_BY(mu_);
  int overlaps_ ABSL_GUARDED_BY(mu_) = 0;
  int steps_ ABSL_GUARDED_BY(mu_) = 0;
};

class ManyInstancesTest : public FaultsTest {
 protected:
  int Nodes() override { return 7; }
  int Stocks() override { return 56; }
};

TEST_F(ManyInstancesTest, TwoReconcilersNeverWorkOneRowAtOnceAndFiftyInstancesSettle) {
  constexpr int kInstances = 50;
  StartAgents();
  ExclusionHook hook;
  StartReconciler(&hook);
  StartReconciler(&hook);
  for (int i = 0; i < kInstances; ++i) Insert("i" + std::to_string(i), {.tmpl = Sleeper()});
  for (int i = 0; i < kInstances; ++i) {
    ASSERT_TRUE(WaitForState("i" + std::to_string(i), pb::STATE_RUNNING));
  }
  EXPECT_EQ(ClaimedStocks(), kInstances);
  for (int i = 0; i < kInstances; ++i) Stop("i" + std::to_string(i));
  for (int i = 0; i < kInstances; ++i) {
    ASSERT_TRUE(WaitForState("i" + std::to_string(i), pb::STATE_STOPPED));
  }
  EXPECT_EQ(ClaimedStocks(), 0);
  for (int i = 0; i < kInstances; ++i) Delete("i" + std::to_string(i));
  for (int i = 0; i < kInstances; ++i) {
    ASSERT_TRUE(WaitFor("i" + std::to_string(i),
                        [](const WorkRow& r) { return r.delete_time.has_value(); }));
  }
  EXPECT_EQ(hook.overlaps(), 0);
  EXPECT_GE(hook.steps(), kInstances * 8);
  for (const auto& agent : agents_) EXPECT_TRUE(agent->running().empty());
}

// Stops the reconciler at one step of one instance, as a crash there would: `before` the step
// (blocks until the reconciler stops, then abandons the step) or after its calls, before its
// commit (abandons the writes at once, the calls stay done).
class CrashHook final : public StepHook {
 public:
  CrashHook(Step step, bool at_commit) : step_(step), at_commit_(at_commit) {}

  absl::Status BeforeStep(std::string_view, Step step, const StopSignal& stopping) override {
    if (at_commit_ || step != step_) return absl::OkStatus();
    reached_.store(true);
    stopping.Wait();
    return absl::AbortedError("crashed");
  }
  absl::Status BeforeCommit(std::string_view, Step step, const StopSignal&) override {
    if (!at_commit_ || step != step_) return absl::OkStatus();
    reached_.store(true);
    return absl::AbortedError("crashed");
  }
  bool reached() const { return reached_.load(); }

 private:
  const Step step_;
  const bool at_commit_;
  std::atomic<bool> reached_{false};
};

TEST_F(FaultsTest, AReconcilerStoppedMidChainIsResumedByAnother) {
  StartAgents();
  CrashHook hook(Step::kAttach, /*at_commit=*/false);
  StartReconciler(&hook);
  Insert("web", {.storage_id = "vol", .tmpl = WithVolume()});
  ASSERT_TRUE(Eventually([&] { return hook.reached(); }));
  StopReconcilers();
  EXPECT_EQ(ClaimedStocks(), 1);
  EXPECT_TRUE(AttachedTo().empty());
  StartReconciler();
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  EXPECT_EQ(ClaimedStocks(), 1);
  EXPECT_EQ(AttachedTo(), std::vector<std::string>{"web"});
}

TEST_F(FaultsTest, ACrashBetweenClaimAndCommitResumesWithTheSameStock) {
  StartAgents();
  CrashHook hook(Step::kClaim, /*at_commit=*/true);
  StartReconciler(&hook);
  Insert("web", {.tmpl = Sleeper()});
  ASSERT_TRUE(Eventually([&] { return hook.reached(); }));
  StopReconcilers();
  EXPECT_EQ(ClaimedStocks(), 1) << "the stock service claimed it; the row does not know";
  EXPECT_TRUE(Row("web").stock_id.empty());
  StartReconciler();
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  EXPECT_EQ(ClaimedStocks(), 1);
}

TEST_F(FaultsTest, ACrashBetweenClaimAndCommitThenAStopLeaksNoStock) {
  StartAgents();
  CrashHook hook(Step::kClaim, /*at_commit=*/true);
  StartReconciler(&hook);
  Insert("web", {.tmpl = Sleeper()});
  ASSERT_TRUE(Eventually([&] { return hook.reached(); }));
  StopReconcilers();
  Stop("web");
  StartReconciler();
  ASSERT_TRUE(WaitForState("web", pb::STATE_STOPPED));
  EXPECT_EQ(ClaimedStocks(), 0);
}

TEST_F(FaultsTest, ACrashBetweenAttachAndCommitThenADeleteLeaksNoAttachment) {
  StartAgents();
  CrashHook hook(Step::kAttach, /*at_commit=*/true);
  StartReconciler(&hook);
  Insert("web", {.storage_id = "vol", .tmpl = WithVolume()});
  ASSERT_TRUE(Eventually([&] { return hook.reached(); }));
  StopReconcilers();
  EXPECT_EQ(AttachedTo(), std::vector<std::string>{"web"});
  Delete("web");
  StartReconciler();
  ASSERT_TRUE(WaitFor("web", [](const WorkRow& r) { return r.delete_time.has_value(); }));
  EXPECT_TRUE(AttachedTo().empty());
  EXPECT_EQ(ClaimedStocks(), 0);
}

TEST_F(FaultsTest, AStopWhileTheReconcilerIsDownIsFinishedByTheNextOne) {
  StartAgents();
  CrashHook hook(Step::kRelease, /*at_commit=*/false);
  StartReconciler(&hook);
  Insert("web", {.tmpl = Sleeper()});
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  Stop("web");
  ASSERT_TRUE(Eventually([&] { return hook.reached(); }));
  StopReconcilers();
  EXPECT_EQ(ClaimedStocks(), 1);
  StartReconciler();
  ASSERT_TRUE(WaitForState("web", pb::STATE_STOPPED));
  EXPECT_EQ(ClaimedStocks(), 0);
  const std::vector<UsageRow> usage = Usage("web");
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_TRUE(usage[0].end.has_value());
}

}  // namespace
}  // namespace gpuaas::instance::testing

namespace gpuaas::instance::testing {
namespace {

// Holds one step of every instance until released (a replica hung in the middle of a step).
class HangHook final : public StepHook {
 public:
  explicit HangHook(Step step) : step_(step) {}
  absl::Status BeforeStep(std::string_view, Step step, const StopSignal& stopping) override {
    if (step != step_) return absl::OkStatus();
    reached_.store(true);
    while (!release_.WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
      if (stopping.stopped()) break;
    }
    return absl::OkStatus();
  }
  absl::Status BeforeCommit(std::string_view, Step, const StopSignal&) override {
    return absl::OkStatus();
  }
  bool reached() const { return reached_.load(); }
  void Release() { release_.Notify(); }

 private:
  const Step step_;
  std::atomic<bool> reached_{false};
  absl::Notification release_;
};

class HungReplicaTest : public FaultsTest {
 protected:
  ReconcilerOptions Options() override {
    ReconcilerOptions o = ReconcilerTest::Options();
    o.call_timeout = absl::Milliseconds(500);  // rows of a hung step are handed over after 5.5 s
    return o;
  }
};

TEST_F(HungReplicaTest, ARowHeldByAHungReplicaIsHandedOver) {
  StartAgents();
  HangHook hook(Step::kPublish);
  StartReconciler(&hook);
  Insert("web", {.tmpl = Sleeper()});
  ASSERT_TRUE(gpuaas::testing::Eventually([&] { return hook.reached(); }));
  StartReconciler();  // the other replica
  EXPECT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  hook.Release();  // the hung step wakes to a closed session and writes nothing
  StopReconcilers();
  EXPECT_EQ(Row("web").state, pb::STATE_RUNNING);
  EXPECT_EQ(ClaimedStocks(), 1);
}

}  // namespace
}  // namespace gpuaas::instance::testing
