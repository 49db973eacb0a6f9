#include "services/instance/repository_sessions.h"

namespace gpuaas::instance::repo {

std::optional<SessionTarget> GetSessionTarget(db::Tx& tx, const std::string& instance_id) {
  constexpr std::string_view kGetSessionTarget =
      "SELECT i.tenant_id, i.delete_time IS NOT NULL, i.state, i.held_run, i.node_id, "
      "coalesce(n.agent_address, '') FROM instance.instances i "
      "LEFT JOIN instance.nodes n ON n.node_id = i.node_id WHERE i.instance_id = $1";
  std::optional<db::Row> row = tx.Exec(kGetSessionTarget, instance_id).First();
  if (!row) return std::nullopt;
  return SessionTarget{.tenant_id = row->Get<std::string>(0),
                       .deleted = row->Get<bool>(1),
                       .state = row->Get<int32_t>(2),
                       .run = row->Get<int32_t>(3),
                       .node_id = row->Get<std::string>(4),
                       .agent_address = row->Get<std::string>(5)};
}

void InsertSession(db::Tx& tx, const SessionRecord& r) {
  constexpr std::string_view kInsertSession =
      "INSERT INTO instance.sessions (session_id, instance_id, tenant_id, user_id, peer, kind, "
      "detail, node_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
  tx.Exec(kInsertSession, r.session_id, r.instance_id, r.tenant_id, r.user_id, r.peer, r.kind,
          r.detail, r.node_id);
}

void CloseSession(db::Tx& tx, const std::string& session_id, const std::string& outcome) {
  constexpr std::string_view kCloseSession =
      "UPDATE instance.sessions SET close_time = now(), outcome = $2 WHERE session_id = $1";
  tx.Exec(kCloseSession, session_id, outcome);
}

}  // namespace gpuaas::instance::repo
