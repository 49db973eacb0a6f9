#include "services/instance/repository_logs.h"

namespace gpuaas::instance::repo {

std::optional<LogTarget> GetLogTarget(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kGetLogTarget =
      "SELECT i.tenant_id, i.delete_time IS NOT NULL, i.log_run, i.log_node_id, "
      "coalesce(n.agent_address, '') FROM instance.instances i "
      "LEFT JOIN instance.nodes n ON n.node_id = i.log_node_id WHERE i.instance_id = $1";
  std::optional<db::Row> row = tx.Exec(kGetLogTarget, instance_id).First();
  if (!row) return std::nullopt;
  return LogTarget{.tenant_id = row->Get<std::string>(0),
                   .deleted = row->Get<bool>(1),
                   .run = row->Get<int32_t>(2),
                   .node_id = row->Get<std::string>(3),
                   .agent_address = row->Get<std::string>(4)};
}

void SetAgentAddress(db::Tx& tx, const std::string& node_id, const std::string& agent_address) {
  constexpr std::string_view kSetAgentAddress =
      "UPDATE instance.nodes SET agent_address = $2 "
      "WHERE node_id = $1 AND agent_address IS DISTINCT FROM $2";
  tx.Exec(kSetAgentAddress, node_id, agent_address);
}

}  // namespace gpuaas::instance::repo
