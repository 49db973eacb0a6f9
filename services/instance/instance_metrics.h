// GetInstanceMetrics: an instance's GPUs as its node's agent last reported them to the stock
// service (which keeps each node's latest heartbeat), read with the caller's own token.
#pragma once

#include "absl/status/status.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/authz/principal.h"
#include "libs/client/stock_client.h"
#include "libs/db/db.h"
#include "services/instance/instances.h"

namespace gpuaas::instance {

class InstanceMetricsReader final {
 public:
  InstanceMetricsReader(db::Pool& pool, client::StockClient& stock) : pool_(pool), stock_(stock) {}

  absl::Status GetInstanceMetrics(const authz::Principal& p,
                                  const client::CallerCredentials& caller,
                                  const pb::GetInstanceMetricsRequest& req,
                                  pb::InstanceMetrics& out);

 private:
  db::Pool& pool_;
  client::StockClient& stock_;
};

}  // namespace gpuaas::instance
