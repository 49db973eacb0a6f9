// The SQL of terminals and port-forwards (0011_instance_sessions.sql): where an instance's
// current run is reached, and the audit record of each session.
#pragma once

#include <optional>
#include <string>

#include "libs/db/db.h"

namespace gpuaas::instance::repo {

// The instance's current run, and where its node's agent is reached.
struct SessionTarget {
  std::string tenant_id;
  bool deleted = false;
  int32_t state = 0;  // instance.v1.State
  int32_t run = 0;    // 0: holds no stock now
  std::string node_id;
  std::string agent_address;  // '' when unknown
};

// nullopt when there is no such instance (tombstones are returned, `deleted`).
std::optional<SessionTarget> GetSessionTarget(db::Tx& tx, const std::string& instance_id);

struct SessionRecord {
  std::string session_id;
  std::string instance_id;
  std::string tenant_id;
  std::string user_id;
  std::string peer;
  std::string kind;  // "exec", "port_forward"
  std::string detail;
  std::string node_id;
};

void InsertSession(db::Tx& tx, const SessionRecord& record);
// Sets the session's close time (now) and outcome.
void CloseSession(db::Tx& tx, const std::string& session_id, const std::string& outcome);

}  // namespace gpuaas::instance::repo
