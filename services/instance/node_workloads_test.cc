// What agents' reports do to a row, without a database.
#include "services/instance/node_workloads.h"

#include <gtest/gtest.h>

#include "libs/common/proto_time.h"

namespace gpuaas::instance {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1000);

WorkRow Published() {
  WorkRow r;
  r.instance_id = "web";
  r.desired = pb::DESIRED_STATE_RUNNING;
  r.state = pb::STATE_PENDING;
  r.run = 1;
  r.held_run = 1;
  r.stock_id = "stk";
  r.node_id = "n1";
  r.published = true;
  return r;
}

pb::WorkloadStatus Status(pb::WorkloadState state, absl::Time at) {
  pb::WorkloadStatus s;
  s.set_workload_id("web.1");
  s.set_instance_id("web");
  s.set_state(state);
  *s.mutable_state_time() = ToProtoTime(at);
  return s;
}

TEST(ApplyWorkloadStatusTest, StartedThenRunning) {
  WorkRow r = Published();
  bool wake = false;
  pb::WorkloadStatus s = Status(pb::WORKLOAD_STATE_STARTED, kNow - absl::Seconds(2));
  pb::PortMapping* m = s.add_ports();
  m->set_port(80);
  m->set_host_port(31000);
  EXPECT_TRUE(ApplyWorkloadStatus(r, s, kNow, "10.0.0.5", 5, wake));
  EXPECT_TRUE(wake);
  EXPECT_EQ(r.state, pb::STATE_READY);
  EXPECT_EQ(r.start_time, kNow - absl::Seconds(2));
  EXPECT_EQ(r.workload_start_time, kNow - absl::Seconds(2));
  EXPECT_EQ(r.last_active_time, kNow - absl::Seconds(2));
  ASSERT_EQ(r.ports.size(), 1);
  EXPECT_EQ(r.ports[0].host(), "10.0.0.5");

  wake = false;
  EXPECT_TRUE(ApplyWorkloadStatus(r, Status(pb::WORKLOAD_STATE_RUNNING, kNow), kNow, "", 5, wake));
  EXPECT_FALSE(wake);
  EXPECT_EQ(r.state, pb::STATE_RUNNING);
  EXPECT_EQ(r.start_time, kNow - absl::Seconds(2)) << "the run started when it STARTED";
}

TEST(ApplyWorkloadStatusTest, ClockAheadIsClampedToNow) {
  WorkRow r = Published();
  bool wake = false;
  ApplyWorkloadStatus(r, Status(pb::WORKLOAD_STATE_STARTED, kNow + absl::Hours(1)), kNow, "", 5,
                      wake);
  EXPECT_EQ(r.workload_start_time, kNow);
}

TEST(ApplyWorkloadStatusTest, ExitFailsTheInstanceWithItsCode) {
  WorkRow r = Published();
  bool wake = false;
  ApplyWorkloadStatus(r, Status(pb::WORKLOAD_STATE_STARTED, kNow - absl::Seconds(9)), kNow, "", 5,
                      wake);
  pb::WorkloadStatus exited = Status(pb::WORKLOAD_STATE_EXITED, kNow - absl::Seconds(1));
  exited.set_exit_code(3);
  EXPECT_TRUE(ApplyWorkloadStatus(r, exited, kNow, "", 5, wake));
  EXPECT_EQ(r.state, pb::STATE_FAILED);
  EXPECT_EQ(r.reason, pb::REASON_WORKLOAD_EXITED);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.published);
  EXPECT_EQ(r.workload_stop_time, kNow - absl::Seconds(1));
  // Anything later about it is stale.
  EXPECT_FALSE(ApplyWorkloadStatus(r, Status(pb::WORKLOAD_STATE_RUNNING, kNow), kNow, "", 5, wake));
}

TEST(ApplyWorkloadStatusTest, ProbeTimeoutKeepsItsReason) {
  WorkRow r = Published();
  bool wake = false;
  pb::WorkloadStatus failed = Status(pb::WORKLOAD_STATE_FAILED, kNow);
  failed.set_reason(pb::REASON_PROBE_TIMEOUT);
  ApplyWorkloadStatus(r, failed, kNow, "", 5, wake);
  EXPECT_EQ(r.state, pb::STATE_FAILED);
  EXPECT_EQ(r.reason, pb::REASON_PROBE_TIMEOUT);
}

TEST(ApplyWorkloadStatusTest, StoppingRowOnlyLearnsTheWorkloadIsGone) {
  WorkRow r = Published();
  r.state = pb::STATE_STOPPING;
  r.desired = pb::DESIRED_STATE_STOPPED;
  r.published = false;
  r.unpublish_time = kNow - absl::Seconds(1);
  bool wake = false;
  EXPECT_TRUE(ApplyWorkloadStatus(r, Status(pb::WORKLOAD_STATE_STOPPED, kNow), kNow, "", 5, wake));
  EXPECT_TRUE(wake);
  EXPECT_EQ(r.state, pb::STATE_STOPPING);
  EXPECT_EQ(r.workload_state, pb::WORKLOAD_STATE_STOPPED);
}

TEST(ApplyWorkloadStatusTest, BusyGpusMoveLastActive) {
  WorkRow r = Published();
  bool wake = false;
  ApplyWorkloadStatus(r, Status(pb::WORKLOAD_STATE_RUNNING, kNow - absl::Minutes(5)),
                      kNow - absl::Minutes(5), "", 5, wake);
  pb::WorkloadStatus idle = Status(pb::WORKLOAD_STATE_RUNNING, kNow);
  idle.set_gpu_utilization_percent(1);
  ApplyWorkloadStatus(r, idle, kNow, "", 5, wake);
  EXPECT_EQ(r.last_active_time, kNow - absl::Minutes(5));
  pb::WorkloadStatus busy = idle;
  busy.set_gpu_utilization_percent(40);
  ApplyWorkloadStatus(r, busy, kNow, "", 5, wake);
  EXPECT_EQ(r.last_active_time, kNow);
}

TEST(ApplyAbsenceTest, OnlyAnUnpublishedWorkloadIsGone) {
  WorkRow r = Published();
  EXPECT_FALSE(ApplyAbsence(r, kNow)) << "published: maybe not started yet";
  r.published = false;
  r.unpublish_time = kNow - absl::Seconds(1);
  EXPECT_TRUE(ApplyAbsence(r, kNow));
  EXPECT_EQ(r.workload_state, pb::WORKLOAD_STATE_STOPPED);
  EXPECT_EQ(r.workload_stop_time, kNow);
}

TEST(ApplyWorkloadStatusTest, OomKillAndPullFailureFailTheInstanceWithTheirReason) {
  for (const pb::Reason reason : {pb::REASON_OOM_KILLED, pb::REASON_IMAGE_PULL_FAILED}) {
    WorkRow r = Published();
    r.state = pb::STATE_RUNNING;
    r.workload_start_time = kNow - absl::Seconds(5);
    bool wake = false;
    pb::WorkloadStatus s = Status(pb::WORKLOAD_STATE_FAILED, kNow);
    s.set_reason(reason);
    s.set_message("the agent's words");
    EXPECT_TRUE(ApplyWorkloadStatus(r, s, kNow, "", 5, wake));
    EXPECT_TRUE(wake);
    EXPECT_EQ(r.state, pb::STATE_FAILED) << pb::Reason_Name(reason);
    EXPECT_EQ(r.reason, reason);
    EXPECT_EQ(r.message, "the agent's words");
    EXPECT_FALSE(r.published) << "final for this start, as START_ERROR";
  }
  WorkRow r = Published();
  bool wake = false;
  pb::WorkloadStatus s = Status(pb::WORKLOAD_STATE_FAILED, kNow);
  s.set_reason(pb::REASON_QUOTA_EXCEEDED);
  EXPECT_TRUE(ApplyWorkloadStatus(r, s, kNow, "", 5, wake));
  EXPECT_EQ(r.reason, pb::REASON_START_ERROR) << "an agent names only its own reasons";
}

TEST(PullEventTest, ProgressOfTheLiveRunBecomesAnEventAndChangesNothingElse) {
  WorkRow r = Published();
  pb::WorkloadStatus s = Status(pb::WORKLOAD_STATE_PULLING, kNow);
  s.set_message("layer 2/3: 40 MB of 120 MB");
  EXPECT_EQ(PullEvent(r, s), "pulling the image: layer 2/3: 40 MB of 120 MB");
  bool wake = false;
  EXPECT_FALSE(ApplyWorkloadStatus(r, s, kNow, "", 5, wake)) << "no state change";
  EXPECT_EQ(r.state, pb::STATE_PENDING);

  s.set_message("bad\nline\x01");
  EXPECT_EQ(PullEvent(r, s), "pulling the image: bad?line?");

  WorkRow stale = Published();
  stale.run = 2;  // a newer start: the old run's pull says nothing
  EXPECT_FALSE(PullEvent(stale, s).has_value());
  WorkRow stopping = Published();
  stopping.desired = pb::DESIRED_STATE_STOPPED;
  EXPECT_FALSE(PullEvent(stopping, s).has_value());
  WorkRow started = Published();
  started.workload_start_time = kNow;
  EXPECT_FALSE(PullEvent(started, s).has_value()) << "a started workload pulls no more";
  EXPECT_FALSE(PullEvent(r, Status(pb::WORKLOAD_STATE_STARTED, kNow)).has_value());
}

}  // namespace
}  // namespace gpuaas::instance
