// The reconciler's plan: which step follows from which row, forwards and backwards.
#include "services/instance/reconciler_plan.h"

#include <gtest/gtest.h>

namespace gpuaas::instance {
namespace {

WorkRow Pending() {
  WorkRow r;
  r.instance_id = "web";
  r.desired = pb::DESIRED_STATE_RUNNING;
  r.state = pb::STATE_PENDING;
  r.run = 1;
  return r;
}

TEST(NextStepTest, StartChainInOrder) {
  WorkRow r = Pending();
  r.storage_id = "vol";
  EXPECT_EQ(NextStep(r), Step::kBegin);
  r.held_run = 1;
  r.attached = true;
  EXPECT_EQ(NextStep(r), Step::kClaim);
  r.stock_id = "stk_1";
  r.node_id = "n1";
  EXPECT_EQ(NextStep(r), Step::kAttach);
  r.host_path = "/data/vol";
  EXPECT_EQ(NextStep(r), Step::kPublish);
  r.published = true;
  EXPECT_EQ(NextStep(r), Step::kWait);
  r.workload_start_time = absl::FromUnixSeconds(100);
  r.state = pb::STATE_READY;
  EXPECT_EQ(NextStep(r), Step::kMeter);
  r.metered = 1;
  EXPECT_EQ(NextStep(r), Step::kWait);
}

TEST(NextStepTest, ACephAttachmentCountsAsAttached) {
  WorkRow r = Pending();
  r.storage_id = "vol";
  r.held_run = 1;
  r.attached = true;
  r.stock_id = "stk_1";
  r.node_id = "n1";
  EXPECT_EQ(NextStep(r), Step::kAttach);
  r.ceph_mount.set_client_id("gpuaas-att-0123");
  EXPECT_EQ(NextStep(r), Step::kPublish);
}

TEST(NextStepTest, NoStorageSkipsAttach) {
  WorkRow r = Pending();
  r.held_run = 1;
  r.stock_id = "stk_1";
  EXPECT_EQ(NextStep(r), Step::kPublish);
}

WorkRow Running() {
  WorkRow r = Pending();
  r.state = pb::STATE_RUNNING;
  r.held_run = 1;
  r.stock_id = "stk_1";
  r.node_id = "n1";
  r.storage_id = "vol";
  r.attached = true;
  r.host_path = "/data/vol";
  r.published = true;
  r.workload_state = pb::WORKLOAD_STATE_RUNNING;
  r.workload_start_time = absl::FromUnixSeconds(100);
  r.metered = 1;
  return r;
}

TEST(BuildWorkloadTest, ACephStorageIsMountedByTheAgentWithoutASecret) {
  WorkRow r = Running();
  r.host_path = "";
  r.ceph_mount.set_storage_id("vol");
  r.ceph_mount.add_monitors("v2:10.0.0.1:3300");
  r.ceph_mount.set_fs_name("gpuaas");
  r.ceph_mount.set_path("/volumes/_nogroup/stu_1/abc");
  r.ceph_mount.set_client_id("gpuaas-att-0123");
  r.tmpl.add_volumes()->set_mount_path("/data");
  const pb::Workload w = BuildWorkload(r, absl::Seconds(7));
  ASSERT_EQ(w.mounts_size(), 1);
  EXPECT_TRUE(w.mounts(0).host_path().empty());
  EXPECT_EQ(w.mounts(0).ceph().SerializeAsString(), r.ceph_mount.SerializeAsString());
}

TEST(NextStepTest, StopChainInOrder) {
  WorkRow r = Running();
  r.desired = pb::DESIRED_STATE_STOPPED;
  EXPECT_EQ(NextStep(r), Step::kUnpublish);
  r.state = pb::STATE_STOPPING;
  r.published = false;
  r.unpublish_time = absl::FromUnixSeconds(200);
  EXPECT_EQ(NextStep(r), Step::kWait) << "the agent may still run it";
  r.workload_state = pb::WORKLOAD_STATE_STOPPED;
  EXPECT_EQ(NextStep(r), Step::kMeterClose);
  r.metered = 2;
  EXPECT_EQ(NextStep(r), Step::kDetach);
  r.attached = false;
  EXPECT_EQ(NextStep(r), Step::kRelease);
  r.held_run = 0;
  EXPECT_EQ(NextStep(r), Step::kFinish);
  r.state = pb::STATE_STOPPED;
  EXPECT_EQ(NextStep(r), Step::kWait);
}

TEST(NextStepTest, DeleteEndsInATombstone) {
  WorkRow r = Pending();
  r.state = pb::STATE_STOPPED;
  r.desired = pb::DESIRED_STATE_DELETED;
  EXPECT_EQ(NextStep(r), Step::kUnpublish) << "enters DELETING";
  r.state = pb::STATE_DELETING;
  EXPECT_EQ(NextStep(r), Step::kFinish);
  r.delete_time = absl::FromUnixSeconds(300);
  EXPECT_EQ(NextStep(r), Step::kWait);
}

TEST(NextStepTest, FailedRunIsTornDownAndStaysFailed) {
  WorkRow r = Running();
  r.state = pb::STATE_FAILED;
  r.published = false;
  r.unpublish_time = absl::FromUnixSeconds(200);
  r.workload_state = pb::WORKLOAD_STATE_EXITED;
  EXPECT_EQ(NextStep(r), Step::kMeterClose);
  r.metered = 2;
  r.attached = false;
  EXPECT_EQ(NextStep(r), Step::kRelease);
  r.held_run = 0;
  EXPECT_EQ(NextStep(r), Step::kWait);
}

TEST(NextStepTest, ClaimThatNeverCommittedIsStillReleased) {
  // The run began (held_run) but the claim's answer was lost: release anyway.
  WorkRow r = Pending();
  r.held_run = 1;
  r.desired = pb::DESIRED_STATE_STOPPED;
  EXPECT_EQ(NextStep(r), Step::kUnpublish);
  r.state = pb::STATE_STOPPING;
  EXPECT_EQ(NextStep(r), Step::kRelease) << "never published: no agent to wait for";
}

TEST(NextStepTest, StartedButUnmeteredRunGetsItsIntervalOnTheWayDown) {
  WorkRow r = Running();
  r.metered = 0;
  r.state = pb::STATE_STOPPING;
  r.desired = pb::DESIRED_STATE_STOPPED;
  r.published = false;
  r.unpublish_time = absl::FromUnixSeconds(200);
  r.workload_state = pb::WORKLOAD_STATE_STOPPED;
  EXPECT_EQ(NextStep(r), Step::kMeter);
}

TEST(NextStepTest, NewRunWaitsForTheOldOneToBeTornDown) {
  WorkRow r = Running();
  r.state = pb::STATE_PENDING;
  r.run = 2;  // StartInstance while run 1 still holds its stock
  EXPECT_EQ(NextStep(r), Step::kUnpublish);
  r.published = false;
  r.unpublish_time = absl::FromUnixSeconds(200);
  r.workload_state = pb::WORKLOAD_STATE_STOPPED;
  r.metered = 2;
  r.attached = false;
  EXPECT_EQ(NextStep(r), Step::kRelease);
  r.held_run = 0;
  EXPECT_EQ(NextStep(r), Step::kBegin);
}

TEST(BuildWorkloadTest, ResolvesMountsAndDefaults) {
  WorkRow r = Running();
  r.held_run = 3;
  r.tenant_id = "acme";
  r.gpu_uuids = {"GPU-a", "GPU-b"};
  r.tmpl.set_cmd("python serve.py");
  pb::Volume* whole = r.tmpl.add_volumes();
  whole->set_mount_path("/data");
  pb::Volume* sub = r.tmpl.add_volumes();
  sub->set_mount_path("/models");
  sub->set_sub_path("models/sd");
  sub->set_read_only(true);
  r.tmpl.add_ports()->set_port(7860);
  pb::Env* env = r.tmpl.add_envs();
  env->set_name("MODEL");
  env->set_value("sd");
  r.proxy_token = "t0ken";
  const pb::Workload w = BuildWorkload(r, absl::Seconds(7));
  EXPECT_EQ(w.workload_id(), "web.3");
  EXPECT_EQ(w.tenant_id(), "acme");
  EXPECT_EQ(w.cmd(), "python serve.py");
  ASSERT_EQ(w.mounts_size(), 2);
  EXPECT_EQ(w.mounts(0).host_path(), "/data/vol");
  EXPECT_EQ(w.mounts(1).host_path(), "/data/vol");
  EXPECT_EQ(w.mounts(1).sub_path(), "models/sd") << "the agent resolves it, beneath host_path";
  EXPECT_TRUE(w.mounts(1).read_only());
  EXPECT_EQ(w.gpu_uuids_size(), 2);
  EXPECT_EQ(w.ports(0).port(), 7860);
  ASSERT_EQ(w.envs_size(), 2);
  EXPECT_EQ(w.envs(0).name(), "MODEL");
  EXPECT_EQ(w.envs(1).name(), "GPUAAS_PROXY_TOKEN");
  EXPECT_EQ(w.envs(1).value(), "t0ken");
  EXPECT_EQ(w.probe_timeout().seconds(), 300);
  EXPECT_EQ(w.stop_grace_period().seconds(), 7);
  EXPECT_TRUE(w.image_reference().empty()) << "no image: the process runtime's way";
  EXPECT_FALSE(w.has_registry_credentials()) << "the caller opens the login";
}

TEST(BuildWorkloadTest, CarriesThePinnedImageTheSpecsLimitsAndTheEgressPolicy) {
  WorkRow r = Running();
  r.image_reference = "127.0.0.1:5000/acme/app@sha256:" + std::string(64, 'b');
  r.registry_secret = "sealed";
  r.limits.set_cpu_millis(1500);
  r.limits.set_memory_bytes(int64_t{2} << 30);
  r.limits.set_ephemeral_disk_bytes(int64_t{10} << 30);
  r.deny_egress = true;
  const pb::Workload w =
      BuildWorkload(r, absl::Seconds(7), WorkloadDefaults{.pids = 512, .open_files = 1024});
  EXPECT_EQ(w.image_reference(), r.image_reference);
  EXPECT_EQ(w.limits().cpu_millis(), 1500);
  EXPECT_EQ(w.limits().memory_bytes(), int64_t{2} << 30);
  EXPECT_EQ(w.limits().ephemeral_disk_bytes(), int64_t{10} << 30);
  EXPECT_EQ(w.limits().pids(), 512);
  EXPECT_EQ(w.limits().open_files(), 1024);
  EXPECT_TRUE(w.deny_egress());
  EXPECT_FALSE(w.has_registry_credentials()) << "the sealed login never goes out as it is";
  EXPECT_EQ(BuildWorkload(r, absl::Seconds(7)).limits().pids(), 4096) << "the default";
}

}  // namespace
}  // namespace gpuaas::instance
