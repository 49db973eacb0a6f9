// gpuaas-stock wired: the database, the cluster view, specs, stocks and nodes, StockService
// and NodeAgentService on one rpc::Server verifying tokens against the auth service's JWKS,
// the heartbeat watcher that turns silent nodes NOT_READY, and the nodes' readiness on /metrics.
// main.cc runs it until a signal; tests start it on port 0 and stop it (two on one database are two
// replicas).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "libs/common/clock.h"
#include "libs/common/periodic_task.h"
#include "libs/db/db.h"
#include "libs/rpc/server.h"
#include "libs/service/service_app.h"
#include "libs/service/service_flags.h"
#include "services/stock/grpc_service.h"
#include "services/stock/node_state_metrics.h"
#include "services/stock/nodes.h"
#include "services/stock/specs.h"
#include "services/stock/stocks.h"
#include "services/stock/view_keeper.h"

namespace gpuaas::stock {

// What main.cc reads from its flags.
struct StockAppOptions {
  service::ServiceFlags common;
  std::string auth_addr = "127.0.0.1:17051";
  std::string placement_policy = "fgd-pack";
  double heartbeat_interval_seconds = 2;
  double node_timeout_seconds = 10;
  // Run the NOT_READY watcher (tests that call MarkLostNodes themselves turn it off).
  bool watch_heartbeats = true;
};

class StockApp final : public service::ServiceApp {
 public:
  static constexpr service::ServiceIdentity kIdentity{
      .name = "stock", .grpc_port = 17052, .metrics_port = 9102};

  // Opens and migrates the database, loads nodes and stocks, and registers both services.
  // Serves nothing yet. Blocks while PostgreSQL comes up. Errors: INVALID_ARGUMENT naming the
  // flag for bad configuration; the database's error otherwise.
  static absl::StatusOr<std::unique_ptr<StockApp>> Create(const StockAppOptions& options);
  // Close().
  ~StockApp() override;

  db::Pool& pool() { return *pool_; }
  ViewKeeper& keeper() { return *keeper_; }
  NodeInventory& nodes() { return *nodes_; }

 private:
  StockApp() : ServiceApp(kIdentity) {}
  // The heartbeat watcher and the refresh of the nodes' readiness series.
  absl::Status StartBackground() override;
  void StopBackground() override;

  bool watch_heartbeats_ = true;
  SystemClock clock_;
  std::unique_ptr<db::Pool> pool_;
  Repository repo_;
  std::unique_ptr<ViewKeeper> keeper_;
  std::unique_ptr<SpecCatalog> specs_;
  std::unique_ptr<StockPool> stocks_;
  std::unique_ptr<NodeInventory> nodes_;
  std::unique_ptr<StockServiceImpl> stock_service_;
  std::unique_ptr<NodeAgentServiceImpl> agent_service_;
  std::unique_ptr<PeriodicTask> heartbeat_watch_;
  std::unique_ptr<NodeStateMetrics> node_metrics_;
  absl::Duration node_metrics_interval_;
  std::unique_ptr<PeriodicTask> node_metrics_refresh_;
};

}  // namespace gpuaas::stock
