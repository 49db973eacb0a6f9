// GetInstanceLogs' SQL: where a run's logs are (0004_workload_logs.sql), and where each node's
// agent serves them.
#pragma once

#include <optional>
#include <string>

#include "libs/db/db.h"

namespace gpuaas::instance::repo {

// The latest run of an instance that reached a node, and where that node's agent is reached.
struct LogTarget {
  std::string tenant_id;
  bool deleted = false;
  int32_t run = 0;  // 0: no run reached a node yet
  std::string node_id;
  std::string agent_address;  // '' when the node's agent serves no logs (or is unknown)
};

// nullopt when there is no such instance (tombstones are returned, `deleted`).
std::optional<LogTarget> GetLogTarget(db::Tx& tx, const std::string& instance_id);

// The agent of `node_id` serves its logs at `agent_address` ('' for none) from now on.
void SetAgentAddress(db::Tx& tx, const std::string& node_id, const std::string& agent_address);

}  // namespace gpuaas::instance::repo
