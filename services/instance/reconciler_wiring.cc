#include "services/instance/reconciler_wiring.h"

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "libs/common/files.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"

namespace gpuaas::instance {

void AddBackHalfFlags(CLI::App& app, std::string_view service_name, BackHalfFlags& f) {
  const auto env = [&](std::string_view flag) { return service::EnvName(service_name, flag); };
  app.add_option("--stock-addr", f.stock_addr, "the stock service: stocks are claimed there")
      ->envname(env("STOCK_ADDR"))
      ->capture_default_str();
  app.add_option("--storage-addr", f.storage_addr,
                 "the storage service: instances' storages are attached there")
      ->envname(env("STORAGE_ADDR"))
      ->capture_default_str();
  app.add_option("--api-key-file", f.api_key_file,
                 "file holding the service's API key, <api_key_id>.<secret> (service role), for "
                 "its calls to stock and storage")
      ->envname(env("API_KEY_FILE"));
  app.add_option("--reconciler-workers", f.reconciler_workers,
                 "threads driving instances (each holds a database connection while it works)")
      ->envname(env("RECONCILER_WORKERS"))
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--call-timeout-seconds", f.call_timeout_seconds,
                 "deadline of each call to stock and storage")
      ->envname(env("CALL_TIMEOUT_SECONDS"))
      ->check(CLI::Range(0.1, 300.0))
      ->capture_default_str();
  app.add_option("--node-timeout-seconds", f.node_timeout_seconds,
                 "a node whose agent neither reports nor watches for this long is lost: its "
                 "instances it ran start again elsewhere (NODE_LOST)")
      ->envname(env("NODE_TIMEOUT_SECONDS"))
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  app.add_option("--no-capacity-retries", f.no_capacity_retries,
                 "a claim that finds no free stock is tried this many more times (0.5 s, 1 s, "
                 "2 s, ... apart) before the instance fails NO_CAPACITY")
      ->envname(env("NO_CAPACITY_RETRIES"))
      ->check(CLI::Range(0, 20))
      ->capture_default_str();
  app.add_option("--report-interval-seconds", f.report_interval_seconds,
                 "how often agents must report (keep it well under --node-timeout-seconds)")
      ->envname(env("REPORT_INTERVAL_SECONDS"))
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--stop-grace-seconds", f.stop_grace_seconds,
                 "SIGTERM to SIGKILL when a workload is stopped")
      ->envname(env("STOP_GRACE_SECONDS"))
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--tombstone-retention-hours", f.tombstone_retention_hours,
                 "a deleted instance stays visible to watches this long; then it is purged "
                 "(its usage stays) and its id may be used again")
      ->envname(env("TOMBSTONE_RETENTION_HOURS"))
      ->check(CLI::Range(0.0, 24.0 * 3650))
      ->capture_default_str();
  app.add_option("--busy-gpu-percent", f.busy_gpu_percent,
                 "GPU utilization from which an instance counts as active (idle auto-stop)")
      ->envname(env("BUSY_GPU_PERCENT"))
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  app.add_option("--workload-pids", f.workload_pids,
                 "processes and threads each workload may have together")
      ->envname(env("WORKLOAD_PIDS"))
      ->check(CLI::Range(int64_t{64}, int64_t{4194304}))
      ->capture_default_str();
  app.add_option("--workload-open-files", f.workload_open_files,
                 "open files per process of each workload (RLIMIT_NOFILE)")
      ->envname(env("WORKLOAD_OPEN_FILES"))
      ->check(CLI::Range(int64_t{64}, int64_t{1048576}))
      ->capture_default_str();
  app.add_option("--secret-key-file", f.secret_key_file,
                 "32 random bytes (head -c 32 /dev/urandom) sealing images' registry logins at "
                 "rest; without it images with a registry login are refused")
      ->envname(env("SECRET_KEY_FILE"));
}

absl::StatusOr<std::unique_ptr<BackHalf>> BackHalf::Create(
    const BackHalfFlags& f, const service::ServiceFlags& common, db::Pool& pool,
    std::shared_ptr<grpc::Channel> auth_channel, rpc::Handler& handler) {
  std::unique_ptr<BackHalf> b(new BackHalf());
  if (f.report_interval_seconds >= f.node_timeout_seconds) {
    return absl::InvalidArgumentError(
        "--report-interval-seconds: must be shorter than --node-timeout-seconds");
  }
  std::string api_key;
  if (f.api_key_file.empty()) {
    Logger("instance")->warn("no --api-key-file: calls to stock and storage carry no token");
  } else {
    absl::StatusOr<std::string> key = ReadSecretFile(f.api_key_file);
    if (!key.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--api-key-file: ", key.status().message()));
    }
    api_key = *std::move(key);
  }
  GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> stock_channel,
                          service::OpenPeerChannel(common, f.stock_addr));
  GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> storage_channel,
                          service::OpenPeerChannel(common, f.storage_addr));
  if (!f.secret_key_file.empty()) {
    absl::StatusOr<SecretBox> box = SecretBox::FromKeyFile(f.secret_key_file);
    if (!box.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--secret-key-file: ", box.status().message()));
    }
    b->box_ = std::make_unique<SecretBox>(*std::move(box));
  }
  GPUAAS_ASSIGN_OR_RETURN(b->hook_, PauseHookFromEnv());
  const absl::Duration call_timeout = absl::Seconds(f.call_timeout_seconds);
  b->auth_ = std::make_unique<client::AuthClient>(std::move(auth_channel), call_timeout);
  b->stock_ = std::make_unique<client::StockClient>(std::move(stock_channel), call_timeout);
  b->storage_ = std::make_unique<client::StorageClient>(std::move(storage_channel), call_timeout);
  b->tokens_ = std::make_unique<client::AccessTokens>(*b->auth_, api_key, b->clock_);
  b->workloads_ = std::make_unique<NodeWorkloads>(
      pool, NodeWorkloadsOptions{
                .report_interval = absl::Seconds(f.report_interval_seconds),
                .stop_grace_period = absl::Seconds(f.stop_grace_seconds),
                .busy_threshold_percent = f.busy_gpu_percent,
                .workload_defaults = {.pids = f.workload_pids, .open_files = f.workload_open_files},
                .box = b->box_.get(),
            });
  b->hub_ = std::make_unique<NodeSetHub>(
      *b->workloads_,
      NodeSetHubOptions{.listen_dsn = common.db_dsn,
                        .touch_interval = absl::Seconds(f.report_interval_seconds) / 2});
  b->node_service_ = std::make_unique<NodeWorkloadServiceImpl>(*b->workloads_, *b->hub_, handler);
  b->reconciler_ = std::make_unique<Reconciler>(
      ReconcilerDeps{.pool = pool,
                     .stock = *b->stock_,
                     .storage = *b->storage_,
                     .auth = *b->auth_,
                     .tokens = *b->tokens_,
                     .hook = b->hook_.get()},
      ReconcilerOptions{.workers = f.reconciler_workers,
                        .call_timeout = call_timeout,
                        .no_capacity_retries = f.no_capacity_retries,
                        .node_timeout = absl::Seconds(f.node_timeout_seconds),
                        .tombstone_retention = absl::Hours(f.tombstone_retention_hours),
                        .listen_dsn = common.db_dsn});
  return b;
}

BackHalf::~BackHalf() { Stop(); }

void BackHalf::Start() {
  hub_->Start();
  reconciler_->Start();
}

void BackHalf::Stop() {
  if (reconciler_) reconciler_->Stop();
  if (hub_) hub_->Stop();
}

}  // namespace gpuaas::instance
