// SQL fragments more than one repository file needs. Private to the repository.
#pragma once

// clang-format off
// The state an unclaimed stock `s` on node `n` should have: AVAILABLE on a ready node whose GPUs
// it holds are healthy and present, else UNAVAILABLE.
#define GPUAAS_UNCLAIMED_STATE                                                              \
  "CASE WHEN n.ready AND NOT EXISTS (SELECT 1 FROM stock.stock_gpus sg JOIN stock.gpus g "  \
  "ON g.node_id = sg.node_id AND g.gpu_index = sg.gpu_index WHERE sg.stock_id = s.stock_id " \
  "AND NOT (g.healthy AND g.present)) THEN 1 ELSE 3 END"
// True when node `n` was heard from within a NodeSilence: its last heartbeat, or the replica's
// start when later, is within the timeout. `timeout` binds int8 microseconds, `since` an
// absl::Time.
#define GPUAAS_NODE_HEARD(timeout, since)                                       \
  "GREATEST(n.heartbeat_time, " GPUAAS_SQL_FROM_MICROS(since) ") > now() - " \
  timeout "::int8 * interval '1 microsecond'"
// clang-format on
