#include "services/instance/app.h"

#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "libs/service/run_app.h"
#include "services/instance/migrations.h"

namespace gpuaas::instance {

absl::StatusOr<std::unique_ptr<InstanceApp>> InstanceApp::Create(const InstanceAppOptions& o) {
  std::unique_ptr<InstanceApp> app(new InstanceApp());
  app->common_ = o.common;
  GPUAAS_RETURN_IF_ERROR(service::ValidateServiceFlags(o.common));
  auto auth_channel = service::OpenPeerChannel(o.common, o.auth_addr);
  if (!auth_channel.ok()) return service::ConfigError("--auth-addr", auth_channel.status());
  auto stock_channel = service::OpenPeerChannel(o.common, o.back.stock_addr);
  if (!stock_channel.ok()) return service::ConfigError("--stock-addr", stock_channel.status());
  auto storage_channel = service::OpenPeerChannel(o.common, o.back.storage_addr);
  if (!storage_channel.ok()) {
    return service::ConfigError("--storage-addr", storage_channel.status());
  }
  auto pool = service::OpenDatabase(kIdentity, o.common, Migrations());
  if (!pool.ok()) return service::StartupError("database", pool.status());
  app->pool_ = *std::move(pool);

  db::Pool& db = *app->pool_;
  app->server_ = std::make_unique<rpc::Server>(
      service::ServerOptionsFor(kIdentity, o.common),
      authz::NewJwksAuthenticator(authz::NewGrpcJwksSource(*auth_channel), app->clock_));
  rpc::Handler& handler = app->server_->handler();
  auto back = BackHalf::Create(o.back, o.common, db, *auth_channel, handler);
  if (!back.ok()) return absl::InvalidArgumentError(back.status().message());
  app->back_ = *std::move(back);
  app->auth_ = std::make_unique<client::AuthClient>(*auth_channel, absl::Seconds(2));
  app->stock_ = std::make_unique<client::StockClient>(*stock_channel, absl::Seconds(2));
  app->storage_ = std::make_unique<client::StorageClient>(*storage_channel, absl::Seconds(2));
  BackHalf& back_half = *app->back_;
  absl::StatusOr<registry::RegistryPolicy> policy =
      registry::RegistryPolicy::Create(o.allowed_registries, o.insecure_registries);
  if (!policy.ok()) return policy.status();
  app->pinner_ = NewRegistryPinner(
      {.policy = *std::move(policy), .timeout = absl::Seconds(o.registry_timeout_seconds)});
  app->pins_ = std::make_unique<ImagePinQueue>(db, *app->pinner_, back_half.secret_box(),
                                               ImagePinQueueOptions{});
  app->images_ = std::make_unique<Images>(db, *app->pins_, back_half.secret_box());
  app->instances_ = std::make_unique<Instances>(
      db, Peers{*app->auth_, *app->stock_, *app->storage_}, *app->images_,
      [&back_half] { back_half.reconciler().Kick(); },
      InstancesOptions{.lookup_cache_ttl = absl::Seconds(o.lookup_cache_seconds)});
  app->watches_ = std::make_unique<InstanceWatches>(db, o.common.db_dsn);
  app->access_ =
      std::make_unique<Access>(db, *app->auth_, back_half.tokens(),
                               AccessOptions{.domain = o.access_domain,
                                             .scheme = o.access_scheme,
                                             .code_ttl = absl::Seconds(o.access_code_ttl_seconds)});
  app->metrics_ = std::make_unique<InstanceMetricsReader>(db, *app->stock_);
  // Logs come from the node agents, each called with a token minted for it and for logs only:
  // never the service's own, which a program on an agent's port would keep (issue 32).
  app->node_tokens_ = std::make_unique<client::NodeTokens>(*auth_channel, back_half.tokens(),
                                                           app->clock_, absl::Seconds(2));
  const service::ServiceFlags& common = app->common_;
  app->agent_logs_ = std::make_unique<AgentLogClient>(
      [&common](const std::string& address) { return service::OpenPeerChannel(common, address); },
      *app->node_tokens_);
  app->logs_ = std::make_unique<InstanceLogs>(db, *app->agent_logs_);
  // Terminals and port-forwards likewise, a token per node and call.
  app->agent_sessions_ = std::make_unique<AgentSessions>(
      [&common](const std::string& address) { return service::OpenPeerChannel(common, address); },
      *app->node_tokens_);
  app->session_service_ = std::make_unique<InstanceSessionServiceImpl>(
      db, *app->agent_sessions_, *app->access_, handler,
      InstanceSessionsOptions{.recheck = absl::Seconds(o.session_recheck_seconds)});
  app->instance_service_ = std::make_unique<InstanceServiceImpl>(
      *app->instances_, *app->watches_, *app->access_, *app->metrics_, *app->logs_, handler);
  app->image_service_ = std::make_unique<ImageServiceImpl>(*app->images_, handler);
  app->access_service_ = std::make_unique<AccessServiceImpl>(*app->access_, handler);
  app->state_metrics_ =
      std::make_unique<InstanceStateMetrics>(db, app->server_->metrics_registry());
  app->server_->AddService(app->instance_service_.get());
  app->server_->AddService(app->image_service_.get());
  app->server_->AddService(app->access_service_.get());
  app->server_->AddService(app->session_service_.get());
  app->server_->AddService(back_half.node_workload_service());
  return app;
}

InstanceApp::~InstanceApp() { Close(); }

absl::Status InstanceApp::StartBackground() {
  watches_->Start();
  pins_->Start();
  back_->Start();
  // Every 2 s: the alert on PENDING instances waits a minute, so seconds of lag do not matter.
  state_metrics_refresh_ = std::make_unique<PeriodicTask>(
      PeriodicTask::Options{.interval = absl::Seconds(2), .run_immediately = true}, [this] {
        if (absl::Status s = state_metrics_->Refresh(); !s.ok()) {
          Logger("instance")->warn("instance state metrics: {}", s.ToString());
        }
      });
  started_ = true;
  return absl::OkStatus();
}

void InstanceApp::StopBackground() {
  if (started_) {
    state_metrics_refresh_.reset();
    back_->Stop();
    pins_->Stop();
    watches_->Stop();
    started_ = false;
  }
}

}  // namespace gpuaas::instance
