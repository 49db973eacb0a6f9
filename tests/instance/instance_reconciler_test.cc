// The reconciler's chains against real services: start to RUNNING with a claimed stock and an
// attachment, stop, restart, delete, no capacity, a workload that exits, usage intervals.
#include <gtest/gtest.h>

#include "libs/testing/eventually.h"
#include "tests/instance/reconciler_test_base.h"

namespace gpuaas::instance::testing {
namespace {

using ::gpuaas::testing::Eventually;

pb::Template WebTemplate() {
  pb::Template t;
  t.set_cmd("python -m http.server $GPUAAS_PORT_8080");
  pb::Port* p = t.add_ports();
  p->set_port(8080);
  p->set_is_probe(true);
  pb::Env* e = t.add_envs();
  e->set_name("MODE");
  e->set_value("demo");
  pb::Volume* v = t.add_volumes();
  v->set_name("out");
  v->set_mount_path("/data");
  v->set_sub_path("out");
  return t;
}

class InstanceReconcilerTest : public ReconcilerTest {
 protected:
  void SetUp() override {
    ReconcilerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (int i = 0; i < Nodes(); ++i) agents_.push_back(Agent("node-" + std::to_string(i)));
    StartReconciler();
  }
  void TearDown() override {
    agents_.clear();
    ReconcilerTest::TearDown();
  }
  FakeAgent& AgentOf(const std::string& node_id) {
    return *agents_[std::stoi(node_id.substr(node_id.find('-') + 1))];
  }

  std::vector<std::unique_ptr<FakeAgent>> agents_;
};

TEST_F(InstanceReconcilerTest, StartsWithAClaimedStockAndTheStorageAttached) {
  Insert("web", {.storage_id = "vol", .tmpl = WebTemplate()});
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  const WorkRow r = Row("web");
  EXPECT_EQ(StockHolder(r.stock_id), "web");
  EXPECT_EQ(r.gpu_uuids.size(), 1u);
  EXPECT_FALSE(r.host_path.empty());
  EXPECT_EQ(AttachedTo(), std::vector<std::string>{"web"});
  // Inserted without an identity (as instances made before identities are): bound to the
  // storage's at its first attach.
  EXPECT_EQ(r.storage_uid.rfind("vol_", 0), 0u) << r.storage_uid;
  ASSERT_TRUE(r.start_time.has_value());
  ASSERT_EQ(r.ports.size(), 1);
  EXPECT_EQ(r.ports[0].port(), 8080);
  EXPECT_EQ(r.ports[0].host(), "127.0.0.1");

  // The agent got the workload as the row describes it.
  const std::map<std::string, pb::Workload> running = AgentOf(r.node_id).running();
  ASSERT_EQ(running.count("web.1"), 1u);
  const pb::Workload& w = running.at("web.1");
  EXPECT_EQ(w.tenant_id(), "alpha");
  EXPECT_EQ(w.cmd(), "python -m http.server $GPUAAS_PORT_8080");
  ASSERT_EQ(w.mounts_size(), 1);
  EXPECT_EQ(w.mounts(0).host_path(), r.host_path);
  EXPECT_EQ(w.mounts(0).sub_path(), "out") << "resolved by the agent, beneath host_path";
  EXPECT_EQ(w.mounts(0).mount_path(), "/data");
  ASSERT_EQ(w.gpu_uuids_size(), 1);
  EXPECT_EQ(w.gpu_uuids(0), r.gpu_uuids[0]);
  EXPECT_EQ(w.stop_grace_period().seconds(), 3);

  // Every transition is an event, READY included though STARTED and RUNNING came in one
  // report.
  absl::StatusOr<std::vector<int>> events = pool_->Read<std::vector<int>>(
      "test.events", [](db::Tx& tx) -> absl::StatusOr<std::vector<int>> {
        return tx.Exec("SELECT state FROM instance.events WHERE instance_id = 'web' ORDER BY seq")
            .Map([](const db::Row& row) { return row.Get<int>(0); });
      });
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(*events, (std::vector<int>{pb::STATE_PENDING, pb::STATE_READY, pb::STATE_RUNNING}));

  // One open interval from the workload's start, at the spec's price.
  const std::vector<UsageRow> usage = Usage("web");
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].start, *r.start_time);
  EXPECT_FALSE(usage[0].end.has_value());
  EXPECT_EQ(usage[0].micros_per_hour, kMicrosPerHour);
  EXPECT_EQ(usage[0].currency, "USD");
  EXPECT_EQ(usage[0].node_id, r.node_id);
}

TEST_F(InstanceReconcilerTest, StopReleasesTheStockAndDetachesThenStartClaimsAgain) {
  Insert("web", {.storage_id = "vol", .tmpl = WebTemplate()});
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  const std::string node = Row("web").node_id;
  Stop("web");
  ASSERT_TRUE(WaitForState("web", pb::STATE_STOPPED));
  WorkRow r = Row("web");
  EXPECT_EQ(r.reason, pb::REASON_USER_REQUEST);
  EXPECT_TRUE(r.node_id.empty());
  EXPECT_TRUE(r.stock_id.empty());
  EXPECT_EQ(r.held_run, 0);
  EXPECT_TRUE(r.stop_time.has_value());
  EXPECT_EQ(ClaimedStocks(), 0);
  EXPECT_TRUE(AttachedTo().empty());
  EXPECT_TRUE(AgentOf(node).running().empty()) << "the agent stopped the workload";
  std::vector<UsageRow> usage = Usage("web");
  ASSERT_EQ(usage.size(), 1u);
  ASSERT_TRUE(usage[0].end.has_value());
  EXPECT_LE(*usage[0].end, DbNow());

  Start("web");
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  r = Row("web");
  EXPECT_EQ(r.held_run, 2);
  EXPECT_EQ(StockHolder(r.stock_id), "web");
  EXPECT_EQ(AgentOf(r.node_id).running().count("web.2"), 1u);
  usage = Usage("web");
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_GE(usage[1].start, *usage[0].end);
}

TEST_F(InstanceReconcilerTest, DeleteLeavesATombstoneAndNothingHeld) {
  Insert("web", {.storage_id = "vol", .tmpl = WebTemplate()});
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  Delete("web");
  ASSERT_TRUE(WaitFor("web", [](const WorkRow& r) { return r.delete_time.has_value(); }));
  const WorkRow r = Row("web");
  EXPECT_EQ(r.state, pb::STATE_DELETING);
  EXPECT_EQ(NextStep(r), Step::kWait);
  EXPECT_EQ(ClaimedStocks(), 0);
  EXPECT_TRUE(AttachedTo().empty());
  const std::vector<UsageRow> usage = Usage("web");
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_TRUE(usage[0].end.has_value());
}

// Past the retention the sweeper purges a tombstone and its events, keeps its usage (the
// bill), moves the watch horizon past it, and its id may be used again.
TEST_F(InstanceReconcilerTest, OldTombstonesArePurgedAndTheirIdsFreedButTheirUsageStays) {
  Insert("web", {.tmpl = WebTemplate()});
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  Delete("web");
  ASSERT_TRUE(WaitFor("web", [](const WorkRow& r) { return r.delete_time.has_value(); }));
  auto count = [&](const std::string& sql) {
    absl::StatusOr<int64_t> n =
        pool_->Read<int64_t>("test.count", [&](db::Tx& tx) -> absl::StatusOr<int64_t> {
          return tx.Exec(sql).First()->Get<int64_t>(0);
        });
    EXPECT_TRUE(n.ok()) << n.status();
    return n.value_or(-1);
  };
  const int64_t revision =
      count("SELECT revision FROM instance.instances WHERE instance_id = 'web'");
  ASSERT_GT(count("SELECT count(*) FROM instance.events WHERE instance_id = 'web'"), 0);

  // A day old: the next reconciler's first sweep purges it.
  Exec(
      "UPDATE instance.instances SET delete_time = now() - interval '25 hours' "
      "WHERE instance_id = 'web'");
  StopReconcilers();
  StartReconciler();
  EXPECT_TRUE(Eventually(
      [&] {
        return count("SELECT count(*) FROM instance.instances WHERE instance_id = 'web'") == 0;
      },
      absl::Seconds(30)));
  EXPECT_EQ(count("SELECT count(*) FROM instance.events WHERE instance_id = 'web'"), 0);
  EXPECT_EQ(Usage("web").size(), 1u);
  EXPECT_GE(count("SELECT purged_revision FROM instance.watch_horizon"), revision);

  Insert("web", {.tmpl = WebTemplate()});
  EXPECT_TRUE(WaitForState("web", pb::STATE_RUNNING)) << "the id is free again";
}

TEST_F(InstanceReconcilerTest, DeleteOfAStoppedInstance) {
  Insert("web", {.tmpl = WebTemplate()});
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  Stop("web");
  ASSERT_TRUE(WaitForState("web", pb::STATE_STOPPED));
  Delete("web");
  ASSERT_TRUE(WaitFor("web", [](const WorkRow& r) {
    return r.delete_time.has_value() && r.state == pb::STATE_DELETING;
  }));
}

TEST_F(InstanceReconcilerTest, NoStockOfTheSpecFailsNoCapacity) {
  stock::v1::CreateSpecRequest req;
  *req.mutable_spec() = stock::testing::MakeSpec("a100.2x", "A100-80GB", 2);
  stock::v1::Spec out;
  grpc::Status s = stock_->stub().CreateSpec(Ctx(admin_).get(), req, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  Insert("big", {.spec_name = "a100.2x", .storage_id = "vol", .tmpl = WebTemplate()});
  ASSERT_TRUE(WaitForState("big", pb::STATE_FAILED));
  const WorkRow r = Row("big");
  EXPECT_EQ(r.reason, pb::REASON_NO_CAPACITY);
  EXPECT_NE(r.message.find("a100.2x"), std::string::npos) << r.message;
  EXPECT_EQ(r.held_run, 0);
  EXPECT_EQ(ClaimedStocks(), 0);
  EXPECT_TRUE(AttachedTo().empty());
  EXPECT_TRUE(Usage("big").empty());
}

TEST_F(InstanceReconcilerTest, NoCapacityIsRetriedSoAStockPlacedMomentsLaterServes) {
  stock::v1::CreateSpecRequest spec;
  *spec.mutable_spec() = stock::testing::MakeSpec("a100.2x", "A100-80GB", 2);
  stock::v1::Spec out;
  grpc::Status s = stock_->stub().CreateSpec(Ctx(admin_).get(), spec, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  Insert("late", {.spec_name = "a100.2x", .storage_id = "vol", .tmpl = WebTemplate()});
  // Refused once (no stock of the spec yet), still PENDING.
  ASSERT_TRUE(WaitFor("late", [](const WorkRow& r) { return r.attempts >= 1; }));
  EXPECT_EQ(Row("late").state, pb::STATE_PENDING);
  stock::v1::CreateStocksRequest place;
  place.set_spec_name("a100.2x");
  place.set_number(1);
  place.set_operation_id("late-op");
  stock::v1::CreateStocksResponse placed;
  s = stock_->stub().CreateStocks(Ctx(admin_).get(), place, &placed);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(placed.placed(), 1);
  ASSERT_TRUE(WaitForState("late", pb::STATE_RUNNING));
  EXPECT_EQ(Row("late").reason, pb::REASON_UNSPECIFIED);
}

TEST_F(InstanceReconcilerTest, UnknownSpecFailsSpecError) {
  Insert("odd", {.spec_name = "no.such.spec"});
  ASSERT_TRUE(WaitForState("odd", pb::STATE_FAILED));
  EXPECT_EQ(Row("odd").reason, pb::REASON_SPEC_ERROR);
}

TEST_F(InstanceReconcilerTest, UnknownStorageFailsStorageErrorAndReleases) {
  pb::Template t = WebTemplate();
  Insert("web", {.storage_id = "missing", .tmpl = t});
  ASSERT_TRUE(WaitForState("web", pb::STATE_FAILED));
  EXPECT_EQ(Row("web").reason, pb::REASON_STORAGE_ERROR);
  EXPECT_EQ(ClaimedStocks(), 0);
}

TEST_F(InstanceReconcilerTest, WorkloadExitFailsWithItsCodeAndReleases) {
  Insert("job", {.tmpl = WebTemplate()});
  ASSERT_TRUE(WaitForState("job", pb::STATE_RUNNING));
  const WorkRow running = Row("job");
  FakeAgent& agent = AgentOf(running.node_id);
  pb::WorkloadStatus exited =
      FakeAgent::StatusOf(agent.running().at("job.1"), pb::WORKLOAD_STATE_EXITED);
  exited.set_exit_code(3);
  ASSERT_TRUE(agent.Report({exited}).ok());
  ASSERT_TRUE(WaitFor("job", [](const WorkRow& r) {
    return r.state == pb::STATE_FAILED && r.held_run == 0 && NextStep(r) == Step::kWait;
  }));
  const WorkRow r = Row("job");
  EXPECT_EQ(r.reason, pb::REASON_WORKLOAD_EXITED);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(ClaimedStocks(), 0);
  const std::vector<UsageRow> usage = Usage("job");
  ASSERT_EQ(usage.size(), 1u);
  ASSERT_TRUE(usage[0].end.has_value());
  EXPECT_LE(*usage[0].end, DbNow());
}

TEST_F(InstanceReconcilerTest, ProbeTimeoutReportedByTheAgentFailsTheInstance) {
  Insert("slow", {.tmpl = WebTemplate()});
  ASSERT_TRUE(WaitForState("slow", pb::STATE_RUNNING));
  FakeAgent& agent = AgentOf(Row("slow").node_id);
  pb::WorkloadStatus failed =
      FakeAgent::StatusOf(agent.running().at("slow.1"), pb::WORKLOAD_STATE_FAILED);
  failed.set_reason(pb::REASON_PROBE_TIMEOUT);
  failed.set_message("port 8080 never answered");
  ASSERT_TRUE(agent.Report({failed}).ok());
  ASSERT_TRUE(WaitFor(
      "slow", [](const WorkRow& r) { return r.state == pb::STATE_FAILED && r.held_run == 0; }));
  EXPECT_EQ(Row("slow").reason, pb::REASON_PROBE_TIMEOUT);
  EXPECT_EQ(Row("slow").message, "port 8080 never answered");
}

TEST_F(InstanceReconcilerTest, UsageIntervalsNeverOverlapNorExceedWallTime) {
  Insert("web", {.tmpl = WebTemplate()});
  for (int run = 1; run <= 3; ++run) {
    if (run > 1) Start("web");
    ASSERT_TRUE(WaitFor("web", [&](const WorkRow& r) {
      return r.state == pb::STATE_RUNNING && r.held_run == run && r.metered == 1;
    }));
    Stop("web");
    ASSERT_TRUE(WaitForState("web", pb::STATE_STOPPED));
  }
  const std::vector<UsageRow> usage = Usage("web");
  ASSERT_EQ(usage.size(), 3u);
  const absl::Time now = DbNow();
  absl::Duration total;
  for (size_t i = 0; i < usage.size(); ++i) {
    ASSERT_TRUE(usage[i].end.has_value()) << i;
    EXPECT_GE(*usage[i].end, usage[i].start) << i;
    EXPECT_LE(*usage[i].end, now) << i;
    if (i > 0) {
      EXPECT_GE(usage[i].start, *usage[i - 1].end) << i;
    }
    total += *usage[i].end - usage[i].start;
  }
  EXPECT_LE(total, now - usage[0].start);
}

TEST_F(InstanceReconcilerTest, AStaleRunsReportTouchesNothing) {
  Insert("web", {.tmpl = WebTemplate()});
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  Stop("web");
  ASSERT_TRUE(WaitForState("web", pb::STATE_STOPPED));
  Start("web");
  ASSERT_TRUE(WaitForState("web", pb::STATE_RUNNING));
  const WorkRow r = Row("web");
  pb::Workload old;
  old.set_workload_id("web.1");
  old.set_instance_id("web");
  pb::WorkloadStatus exited = FakeAgent::StatusOf(old, pb::WORKLOAD_STATE_EXITED);
  // The report is committed when its answer arrives.
  ASSERT_TRUE(AgentOf(r.node_id).Report({exited}).ok());
  EXPECT_EQ(Row("web").state, pb::STATE_RUNNING);
  EXPECT_EQ(Row("web").workload_state, pb::WORKLOAD_STATE_RUNNING);
}

}  // namespace
}  // namespace gpuaas::instance::testing
