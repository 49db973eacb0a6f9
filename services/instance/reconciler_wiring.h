// What gpuaas-instance's main.cc needs to run the back half (the reconciler and
// NodeWorkloadService): its flags, and one object that builds and owns the pieces.
//
//   // flags
//   gpuaas::instance::BackHalfFlags back;
//   gpuaas::instance::AddBackHalfFlags(app, "instance", back);
//   // after OpenDatabase, with the server made:
//   GPUAAS_ASSIGN_OR_RETURN(auto back_half, gpuaas::instance::BackHalf::Create(
//       back, common_flags, *pool, auth_channel, server.handler()));
//   server.AddService(back_half->node_workload_service());
//   back_half->Start();                 // before serving
//   ... the API calls back_half->reconciler().Kick() after each write (optional: NOTIFY wakes it)
//   back_half->Stop();                  // after the server drained
//
// Database connections: reconciler_workers + 2 from the pool at most (workers, the sweeper, the
// hub's sender), plus two listener connections of their own; size --db-pool-size for them and
// the API.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "libs/client/access_tokens.h"
#include "libs/client/auth_client.h"
#include "libs/client/stock_client.h"
#include "libs/client/storage_client.h"
#include "libs/common/clock.h"
#include "libs/common/secret_box.h"
#include "libs/db/db.h"
#include "libs/rpc/handler.h"
#include "libs/service/service_flags.h"
#include "services/instance/node_workloads.h"
#include "services/instance/node_workloads_grpc.h"
#include "services/instance/node_workloads_hub.h"
#include "services/instance/reconciler.h"
#include "services/instance/step_hook.h"

namespace CLI {
class App;
}

namespace gpuaas::instance {

struct BackHalfFlags {
  std::string stock_addr = "127.0.0.1:17052";
  std::string storage_addr = "127.0.0.1:17053";
  // A ROLE_SERVICE API key ("<api_key_id>.<secret>") for the calls to stock and storage.
  std::string api_key_file;
  int reconciler_workers = 4;
  double call_timeout_seconds = 5;
  double node_timeout_seconds = 30;
  int no_capacity_retries = 3;
  double report_interval_seconds = 10;
  double stop_grace_seconds = 10;
  double busy_gpu_percent = 5;
  double tombstone_retention_hours = 24;
  int64_t workload_pids = 4096;
  int64_t workload_open_files = 65536;
  // 32 raw bytes sealing images' registry logins (libs/common/secret_box.h); "" keeps none,
  // and images with a login are refused.
  std::string secret_key_file;
};

// --stock-addr, --storage-addr, --api-key-file, --reconciler-workers, --call-timeout-seconds,
// --node-timeout-seconds, --no-capacity-retries, --report-interval-seconds, --stop-grace-seconds,
// --busy-gpu-percent,
// --workload-pids, --workload-open-files, --secret-key-file, each with its
// GPUAAS_<SERVICE>_<FLAG> environment fallback.
void AddBackHalfFlags(CLI::App& app, std::string_view service_name, BackHalfFlags& flags);

class BackHalf final {
 public:
  // Opens the channels to stock and storage (TLS as the service's own flags say), reads the
  // API key, and builds the reconciler (with the crash drills' pause hook when
  // GPUAAS_INSTANCE_PAUSE_AT is set), the node sets' hub and NodeWorkloadService. Starts
  // nothing. `pool`, `auth_channel`'s service and `handler` must outlive it. Errors:
  // INVALID_ARGUMENT naming the flag (or GPUAAS_INSTANCE_PAUSE_AT).
  static absl::StatusOr<std::unique_ptr<BackHalf>> Create(
      const BackHalfFlags& flags, const service::ServiceFlags& common, db::Pool& pool,
      std::shared_ptr<grpc::Channel> auth_channel, rpc::Handler& handler);
  // Stop().
  ~BackHalf();

  grpc::Service* node_workload_service() { return node_service_.get(); }
  Reconciler& reconciler() { return *reconciler_; }
  // The service's own token (its API key's), for calls to the node agents (logs).
  client::AccessTokens& tokens() { return *tokens_; }
  // The key of --secret-key-file; null without one.
  const SecretBox* secret_box() const { return box_.get(); }

  // Starts the hub and the reconciler. Call once.
  void Start();
  // Stops both. Idempotent.
  void Stop();

 private:
  BackHalf() = default;

  SystemClock clock_;
  std::unique_ptr<client::AuthClient> auth_;
  std::unique_ptr<client::StockClient> stock_;
  std::unique_ptr<client::StorageClient> storage_;
  std::unique_ptr<client::AccessTokens> tokens_;
  std::unique_ptr<SecretBox> box_;
  std::unique_ptr<StepHook> hook_;
  std::unique_ptr<NodeWorkloads> workloads_;
  std::unique_ptr<NodeSetHub> hub_;
  std::unique_ptr<NodeWorkloadServiceImpl> node_service_;
  std::unique_ptr<Reconciler> reconciler_;
};

}  // namespace gpuaas::instance
