#include "services/stock/app.h"

#include <algorithm>

#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "libs/service/run_app.h"
#include "services/stock/migrations.h"

namespace gpuaas::stock {

absl::StatusOr<std::unique_ptr<StockApp>> StockApp::Create(const StockAppOptions& o) {
  std::unique_ptr<StockApp> app(new StockApp());
  app->watch_heartbeats_ = o.watch_heartbeats;
  GPUAAS_RETURN_IF_ERROR(service::ValidateServiceFlags(o.common));
  auto auth_channel = service::OpenPeerChannel(o.common, o.auth_addr);
  if (!auth_channel.ok()) return service::ConfigError("--auth-addr", auth_channel.status());
  auto view = ClusterView::Create({.policy = o.placement_policy});
  if (!view.ok()) return service::ConfigError("--placement-policy", view.status());
  auto pool = service::OpenDatabase(kIdentity, o.common, Migrations());
  if (!pool.ok()) return service::StartupError("database", pool.status());
  app->pool_ = *std::move(pool);
  app->keeper_ = std::make_unique<ViewKeeper>(*app->pool_, app->repo_, *std::move(view));
  if (absl::Status s = app->keeper_->Load(); !s.ok()) {
    return service::StartupError("loading nodes and stocks", s);
  }
  const NodeTimings timings{.heartbeat_interval = absl::Seconds(o.heartbeat_interval_seconds),
                            .node_timeout = absl::Seconds(o.node_timeout_seconds)};
  db::Pool& db = *app->pool_;
  // The grace after a restart runs from here, in the database's clock (NodeSilence).
  absl::Time started;
  const auto read_clock = [&](db::Tx& tx) {
    started = app->repo_.DatabaseNow(tx);
    return absl::OkStatus();
  };
  if (absl::Status s = db.RunInTransaction("stock.start", read_clock); !s.ok()) {
    return service::StartupError("reading the database's clock", s);
  }
  app->specs_ = std::make_unique<SpecCatalog>(db, app->repo_);
  app->nodes_ = std::make_unique<NodeInventory>(db, app->repo_, *app->keeper_, timings, started);
  app->stocks_ = std::make_unique<StockPool>(db, app->repo_, *app->keeper_, app->nodes_->silence());
  app->server_ = std::make_unique<rpc::Server>(
      service::ServerOptionsFor(kIdentity, o.common),
      authz::NewJwksAuthenticator(authz::NewGrpcJwksSource(*auth_channel), app->clock_));
  app->stock_service_ = std::make_unique<StockServiceImpl>(*app->specs_, *app->stocks_,
                                                           *app->nodes_, app->server_->handler());
  app->agent_service_ =
      std::make_unique<NodeAgentServiceImpl>(*app->nodes_, app->server_->handler());
  app->node_metrics_ =
      std::make_unique<NodeStateMetrics>(db, app->repo_, app->server_->metrics_registry());
  // As often as agents beat: a scrape then sees a node NOT_READY within one beat of its marking.
  app->node_metrics_interval_ = std::max(timings.heartbeat_interval, absl::Milliseconds(100));
  app->server_->AddService(app->stock_service_.get());
  app->server_->AddService(app->agent_service_.get());
  return app;
}

StockApp::~StockApp() { Close(); }

absl::Status StockApp::StartBackground() {
  if (watch_heartbeats_) {
    heartbeat_watch_ = nodes_->StartHeartbeatWatch();
  }
  node_metrics_refresh_ = std::make_unique<PeriodicTask>(
      PeriodicTask::Options{.interval = node_metrics_interval_, .run_immediately = true}, [this] {
        if (absl::Status s = node_metrics_->Refresh(); !s.ok()) {
          Logger("stock")->warn("node state metrics: {}", s.ToString());
        }
      });
  return absl::OkStatus();
}

void StockApp::StopBackground() {
  node_metrics_refresh_.reset();
  heartbeat_watch_.reset();
}

}  // namespace gpuaas::stock
