#include "services/instance/instance_metrics.h"

#include <optional>

#include "libs/common/status_macros.h"
#include "libs/service/validate.h"
#include "services/instance/repository_instances.h"

namespace gpuaas::instance {

absl::Status InstanceMetricsReader::GetInstanceMetrics(const authz::Principal& p,
                                                       const client::CallerCredentials& caller,
                                                       const pb::GetInstanceMetricsRequest& req,
                                                       pb::InstanceMetrics& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("instance_id", req.instance_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "reading instances"));
  pb::Instance instance;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("instance.metrics", [&](db::Tx& tx) {
    std::optional<InstanceRow> row = repo::GetInstance(tx, req.instance_id());
    if (!row || row->deleted) return absl::NotFoundError("instance not found");
    GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, row->instance.tenant_id(), "instance"));
    instance = std::move(row->instance);
    return absl::OkStatus();
  }));
  if (instance.node_id().empty() || instance.gpu_uuids().empty()) {
    return absl::FailedPreconditionError("the instance holds no GPUs (it is not running)");
  }
  stock::v1::GetNodeRequest node_req;
  node_req.set_node_id(instance.node_id());
  GPUAAS_ASSIGN_OR_RETURN(stock::v1::Node node,
                          stock_.GetNode(node_req, client::CallContext::OnBehalf(caller)));
  out.set_instance_id(instance.instance_id());
  out.set_node_id(node.node_id());
  *out.mutable_read_time() = node.heartbeat_time();
  for (const std::string& uuid : instance.gpu_uuids()) {
    for (const stock::v1::Gpu& gpu : node.gpus()) {
      if (gpu.uuid() != uuid) continue;
      pb::GpuReading& r = *out.add_gpus();
      r.set_gpu_uuid(uuid);
      r.set_model(gpu.model());
      r.set_utilization_percent(gpu.utilization_percent());
      r.set_memory_used_mib(gpu.memory_used_mib());
      r.set_memory_total_mib(gpu.memory_mib());
      r.set_temperature_celsius(gpu.temperature_celsius());
      r.set_power_watts(gpu.power_watts());
    }
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::instance
