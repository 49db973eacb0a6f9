// gpuaas-storage wired: the database, the local backend, the secret box, specs, storages,
// attachments and accessors, StorageService on one rpc::Server, the S3 data plane over the
// same backend and tables, and the thread that drops abandoned multipart uploads. Start-up
// first finishes the creates and deletes a crash cut short. main.cc runs it until a signal;
// tests start it on port 0 and stop it (a new one on the same database is a restart).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "libs/common/clock.h"
#include "libs/common/periodic_task.h"
#include "libs/common/secret_box.h"
#include "libs/db/db.h"
#include "libs/rpc/server.h"
#include "libs/service/service_app.h"
#include "libs/service/service_flags.h"
#include "services/storage/accessors.h"
#include "services/storage/attachments.h"
#include "services/storage/backends.h"
#include "services/storage/grpc_service.h"
#include "services/storage/s3/server.h"
#include "services/storage/specs.h"
#include "services/storage/storages.h"
#include "services/storage/table_directory.h"
#include "services/storage/tenant_quotas.h"

namespace gpuaas::storage {

// What main.cc reads from its flags.
struct StorageAppOptions {
  service::ServiceFlags common;
  std::string auth_addr = "127.0.0.1:17051";
  std::string data_root = ".gpuaas/storage";
  std::string secret_key_file = ".gpuaas/storage-secret.key";
  std::string s3_listen = "127.0.0.1:9000";
  std::string s3_tls_cert;
  std::string s3_tls_key;
  http::ConnectionLimits s3_limits;
  std::string s3_cors_origins;  // comma list of web origins; see s3::CorsPolicy
  bool s3_share_port = false;   // replicas on one host share --s3-listen's port
  double upload_expiry_hours = 24 * 7;
  bool sync_writes = true;
  // "loop-ext4" (each storage its own file system: the kernel stops every writer at the size)
  // or "directory" (machines without loop devices; workloads can write past the size).
  std::string volume_filesystem = "loop-ext4";
  // Off: no local backend, so that replicas (each with its own --data-root, holding only its
  // ceph-fuse mount point) keep no tenant's data of their own; needs the ceph backend.
  bool local_backend = true;
  // Set: the ceph backend (storages of specs with backend_class "ceph") is served beside the
  // local one, on this cluster's file system `ceph_fs`, as client `ceph_client_id`.
  std::string ceph_conf;
  std::string ceph_keyring;
  std::string ceph_fs = "gpuaas";
  std::string ceph_client_id = "admin";
};

class StorageApp final : public service::ServiceApp {
 public:
  static constexpr service::ServiceIdentity kIdentity{
      .name = "storage", .grpc_port = 17053, .metrics_port = 9103};

  // Reads the sealing key, opens the backend and the database (migrating), finishes
  // interrupted creates and deletes, and registers StorageService. Serves nothing yet. Blocks
  // while PostgreSQL comes up. Errors: INVALID_ARGUMENT naming the flag for bad configuration;
  // the database's error otherwise.
  static absl::StatusOr<std::unique_ptr<StorageApp>> Create(const StorageAppOptions& options);
  // Close().
  ~StorageApp() override;

  int s3_port() const { return s3_->port(); }
  db::Pool& pool() { return *pool_; }
  // The local backend; null with --local-backend=false.
  Backend* local_backend() { return backend_.get(); }
  // The ceph backend; null without --ceph-conf.
  Backend* ceph_backend() { return ceph_backend_.get(); }
  s3::Directory& directory() { return *directory_; }
  // What the start-up passes finished.
  int resumed_creates() const { return resumed_creates_; }
  int resumed_deletes() const { return resumed_deletes_; }

 private:
  StorageApp() : ServiceApp(kIdentity) {}
  // The S3 endpoint and the upload expiry.
  absl::Status StartBackground() override;
  void StopBackground() override;
  // The S3 endpoint and the expiry thread.

  std::string s3_base_url_;  // "http://host", for the log
  absl::Duration upload_expiry_;
  SystemClock clock_;
  std::unique_ptr<SecretBox> box_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Backend> ceph_backend_;
  std::unique_ptr<db::Pool> pool_;
  Repository repo_;
  std::unique_ptr<Backends> backends_;
  std::unique_ptr<TenantQuotas> quotas_;
  std::unique_ptr<StorageSpecs> specs_;
  std::unique_ptr<Storages> storages_;
  std::unique_ptr<Attachments> attachments_;
  std::unique_ptr<Accessors> accessors_;
  std::unique_ptr<Snapshots> snapshots_;
  std::unique_ptr<TableDirectory> directory_;
  std::unique_ptr<StorageServiceImpl> service_;
  std::unique_ptr<NodeStorageServiceImpl> node_service_;
  std::unique_ptr<s3::Server> s3_;
  int resumed_creates_ = 0;
  int resumed_deletes_ = 0;
  std::unique_ptr<PeriodicTask> upload_expiry_task_;
};

}  // namespace gpuaas::storage
