// gpuaas-instance wired: the database; the API (InstanceService, ImageService, AccessService)
// over the peers auth, stock and storage; WatchInstances; and the back half (BackHalf: the
// reconciler and NodeWorkloadService), on one rpc::Server verifying tokens against the auth
// service's JWKS. main.cc runs it until a signal; tests start it on port 0 and stop it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libs/client/auth_client.h"
#include "libs/client/node_tokens.h"
#include "libs/client/stock_client.h"
#include "libs/client/storage_client.h"
#include "libs/common/clock.h"
#include "libs/common/periodic_task.h"
#include "libs/db/db.h"
#include "libs/rpc/server.h"
#include "libs/service/service_app.h"
#include "libs/service/service_flags.h"
#include "services/instance/access.h"
#include "services/instance/grpc_service.h"
#include "services/instance/image_pinner.h"
#include "services/instance/images.h"
#include "services/instance/instance_logs.h"
#include "services/instance/instance_logs_relay.h"
#include "services/instance/instance_metrics.h"
#include "services/instance/instance_sessions.h"
#include "services/instance/instance_state_metrics.h"
#include "services/instance/instance_watches.h"
#include "services/instance/instances.h"
#include "services/instance/reconciler_wiring.h"

namespace gpuaas::instance {

// What main.cc reads from its flags.
struct InstanceAppOptions {
  service::ServiceFlags common;
  std::string auth_addr = "127.0.0.1:17051";
  double lookup_cache_seconds = 2;
  std::string access_domain = "gpuaas.localhost:8080";
  std::string access_scheme = "http";
  double access_code_ttl_seconds = 60;
  // How often an open terminal or port-forward's user and instance are asked about again.
  double session_recheck_seconds = 60;
  // Registries ("host:port") that may sit on a loopback, private or other refused address
  // (registry_policy.h), and those spoken to without verified TLS.
  std::vector<std::string> allowed_registries;
  std::vector<std::string> insecure_registries;
  // Each registry request's timeout (connect included).
  double registry_timeout_seconds = 10;
  BackHalfFlags back;
};

class InstanceApp final : public service::ServiceApp {
 public:
  static constexpr service::ServiceIdentity kIdentity{
      .name = "instance", .grpc_port = 17054, .metrics_port = 9104};

  // Opens the peers' channels and the database (migrating), builds the back half and the API
  // and registers every service. Serves nothing yet. Blocks while PostgreSQL comes up. Errors:
  // INVALID_ARGUMENT naming the flag for bad configuration; the database's error otherwise.
  static absl::StatusOr<std::unique_ptr<InstanceApp>> Create(const InstanceAppOptions& options);
  // Close().
  ~InstanceApp() override;

  BackHalf& back_half() { return *back_; }

 private:
  InstanceApp() : ServiceApp(kIdentity) {}
  // The watches, the back half and the refresh of the instances' state series.
  absl::Status StartBackground() override;
  void StopBackground() override;

  service::ServiceFlags common_;
  SystemClock clock_;
  std::unique_ptr<db::Pool> pool_;
  std::unique_ptr<BackHalf> back_;
  std::unique_ptr<client::AuthClient> auth_;
  std::unique_ptr<client::StockClient> stock_;
  std::unique_ptr<client::StorageClient> storage_;
  ImagePinnerPtr pinner_;
  std::unique_ptr<ImagePinQueue> pins_;
  std::unique_ptr<Images> images_;
  std::unique_ptr<Instances> instances_;
  std::unique_ptr<InstanceWatches> watches_;
  std::unique_ptr<Access> access_;
  std::unique_ptr<InstanceMetricsReader> metrics_;
  std::unique_ptr<client::NodeTokens> node_tokens_;
  std::unique_ptr<AgentLogClient> agent_logs_;
  std::unique_ptr<InstanceLogs> logs_;
  std::unique_ptr<AgentSessions> agent_sessions_;
  std::unique_ptr<InstanceSessionServiceImpl> session_service_;
  std::unique_ptr<InstanceServiceImpl> instance_service_;
  std::unique_ptr<ImageServiceImpl> image_service_;
  std::unique_ptr<AccessServiceImpl> access_service_;
  std::unique_ptr<InstanceStateMetrics> state_metrics_;
  std::unique_ptr<PeriodicTask> state_metrics_refresh_;
  bool started_ = false;
};

}  // namespace gpuaas::instance
