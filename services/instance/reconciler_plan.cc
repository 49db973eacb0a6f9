#include "services/instance/reconciler_plan.h"

#include "absl/strings/str_cat.h"
#include "libs/common/proto_time.h"

namespace gpuaas::instance {
namespace {

// Template.probe_timeout's documented default.
constexpr absl::Duration kDefaultProbeTimeout = absl::Minutes(5);

}  // namespace

std::string_view StepName(Step step) {
  switch (step) {
    case Step::kBegin:
      return "begin";
    case Step::kClaim:
      return "claim";
    case Step::kAttach:
      return "attach";
    case Step::kPublish:
      return "publish";
    case Step::kMeter:
      return "meter";
    case Step::kUnpublish:
      return "unpublish";
    case Step::kMeterClose:
      return "meter_close";
    case Step::kDetach:
      return "detach";
    case Step::kRelease:
      return "release";
    case Step::kFinish:
      return "finish";
    case Step::kWait:
      return "wait";
  }
  return "unknown";
}

bool IsLiveState(pb::State state) {
  return state == pb::STATE_PENDING || state == pb::STATE_READY || state == pb::STATE_RUNNING;
}

bool IsWorkloadGone(pb::WorkloadState state) {
  return state == pb::WORKLOAD_STATE_EXITED || state == pb::WORKLOAD_STATE_STOPPED ||
         state == pb::WORKLOAD_STATE_FAILED;
}

Step NextStep(const WorkRow& r) {
  const bool running = r.desired == pb::DESIRED_STATE_RUNNING && IsLiveState(r.state) &&
                       (r.held_run == 0 || r.held_run == r.run);
  if (running) {
    if (r.held_run == 0) return Step::kBegin;
    if (r.stock_id.empty()) return Step::kClaim;
    if (!r.storage_id.empty() && r.host_path.empty() && r.ceph_mount.client_id().empty()) {
      return Step::kAttach;
    }
    if (!r.published) return Step::kPublish;
    if (r.workload_start_time && r.metered == 0) return Step::kMeter;
    return Step::kWait;
  }
  // Backwards: a stop, a delete, a failure, or a new run while an older one still holds.
  const bool entering = (r.desired == pb::DESIRED_STATE_STOPPED && IsLiveState(r.state)) ||
                        (r.desired == pb::DESIRED_STATE_DELETED && r.state != pb::STATE_DELETING);
  if (entering || r.published) return Step::kUnpublish;
  if (r.held_run != 0) {
    // Its stock is not released while the agent may still run the workload on its GPUs.
    if (r.unpublish_time && !IsWorkloadGone(r.workload_state)) return Step::kWait;
    if (r.workload_start_time && r.metered == 0) return Step::kMeter;
    if (r.metered == 1) return Step::kMeterClose;
    if (r.attached) return Step::kDetach;
    return Step::kRelease;
  }
  if (r.desired == pb::DESIRED_STATE_DELETED) return r.delete_time ? Step::kWait : Step::kFinish;
  if (r.state == pb::STATE_STOPPING) return Step::kFinish;
  return Step::kWait;
}

std::string WorkloadId(const std::string& instance_id, int32_t run) {
  return absl::StrCat(instance_id, ".", run);
}

pb::Workload BuildWorkload(const WorkRow& row, absl::Duration stop_grace_period,
                           const WorkloadDefaults& defaults) {
  pb::Workload w;
  w.set_workload_id(WorkloadId(row.instance_id, row.held_run));
  w.set_instance_id(row.instance_id);
  w.set_tenant_id(row.tenant_id);
  w.set_cmd(row.tmpl.cmd());
  *w.mutable_envs() = row.tmpl.envs();
  // Templates may not name GPUAAS_* variables (instance_rules.cc), so these are the only ones.
  pb::Env* token = w.add_envs();
  token->set_name(std::string(kProxyTokenEnv));
  token->set_value(row.proxy_token);
  if (!row.authorized_keys.empty()) {
    pb::Env* keys = w.add_envs();
    keys->set_name(std::string(kAuthorizedKeysEnv));
    keys->set_value(row.authorized_keys);
  }
  *w.mutable_ports() = row.tmpl.ports();
  for (const pb::Volume& v : row.tmpl.volumes()) {
    pb::Mount* m = w.add_mounts();
    m->set_host_path(row.host_path);
    if (!row.ceph_mount.client_id().empty()) *m->mutable_ceph() = row.ceph_mount;
    m->set_sub_path(v.sub_path());
    m->set_mount_path(v.mount_path());
    m->set_read_only(v.read_only());
  }
  for (const std::string& uuid : row.gpu_uuids) w.add_gpu_uuids(uuid);
  w.set_mig_partition(row.mig_partition);
  *w.mutable_probe_timeout() = row.tmpl.has_probe_timeout() ? row.tmpl.probe_timeout()
                                                            : ToProtoDuration(kDefaultProbeTimeout);
  *w.mutable_stop_grace_period() = ToProtoDuration(stop_grace_period);
  w.set_image_reference(row.image_reference);
  *w.mutable_limits() = row.limits;
  w.mutable_limits()->set_pids(defaults.pids);
  w.mutable_limits()->set_open_files(defaults.open_files);
  w.set_deny_egress(row.deny_egress);
  return w;
}

}  // namespace gpuaas::instance
