// What both files of ReconcileRepository share: the columns of a WorkRow and their reader.
// Private to the repository.
#pragma once

#include "libs/db/rows.h"
#include "services/instance/reconciler_plan.h"

namespace gpuaas::instance {

// clang-format off
#define GPUAAS_WORK_COLUMNS                                                                      \
  "instance_id, tenant_id, spec_name, gpu_num, storage_id, template, desired_state, state, "     \
  "reason, run, held_run, stock_id, node_id, array_to_string(gpu_uuids, ','), mig_partition, "   \
  "attached, host_path, published, workload_state, "                                            \
  GPUAAS_SQL_MICROS("workload_start_time") ", " GPUAAS_SQL_MICROS("workload_stop_time") ", "      \
  GPUAAS_SQL_MICROS("unpublish_time") ", metered, attempts, " GPUAAS_SQL_MICROS("delete_time")   \
  ", message, exit_code, " GPUAAS_SQL_MICROS("start_time") ", " GPUAAS_SQL_MICROS("stop_time")   \
  ", ports, " GPUAAS_SQL_MICROS("last_active_time") ", proxy_token, storage_uid, "           \
  "image_reference, registry_secret, limits, deny_egress, ceph_mount, authorized_keys"
#define GPUAAS_WORK_FROM "SELECT " GPUAAS_WORK_COLUMNS " FROM instance.instances "
// clang-format on

// A row selected with GPUAAS_WORK_COLUMNS.
WorkRow WorkRowFromRow(const db::Row& r);

}  // namespace gpuaas::instance
