#include "services/storage/app.h"

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "libs/http/http_transport.h"
#include "libs/service/run_app.h"
#include "services/storage/ceph/ceph_backend.h"
#include "services/storage/local/local_backend.h"
#include "services/storage/local/loop_filesystem.h"
#include "services/storage/migrations.h"
#include "services/storage/s3/cors.h"

namespace gpuaas::storage {
namespace {

// Drops abandoned multipart uploads older than `expiry`.
void ExpireUploads(Backend& backend, const Clock& clock, absl::Duration expiry) {
  absl::StatusOr<int> dropped = backend.ExpireUploads(clock.Now() - expiry);
  if (!dropped.ok()) {
    Logger("storage")->warn("expiring multipart uploads: {}", dropped.status().ToString());
  } else if (*dropped > 0) {
    Logger("storage")->info("dropped {} multipart uploads older than {}", *dropped,
                            absl::FormatDuration(expiry));
  }
}

// The local backend of --data-root and --volume-filesystem. Errors name the flag at fault.
absl::StatusOr<std::unique_ptr<Backend>> OpenLocalBackend(const StorageAppOptions& o,
                                                          const std::string& data_root) {
  auto volume_filesystem = local::ParseVolumeFilesystem(o.volume_filesystem);
  if (!volume_filesystem.ok()) {
    return service::ConfigError("--volume-filesystem", volume_filesystem.status());
  }
  if (*volume_filesystem == local::VolumeFilesystem::kLoopExt4) {
    if (absl::Status usable = local::CheckLoopFilesystemUsable(); !usable.ok()) {
      return service::ConfigError("--volume-filesystem=loop-ext4", usable);
    }
  }
  auto local = local::NewLocalBackend({.data_root = data_root,
                                       .sync_writes = o.sync_writes,
                                       .volume_filesystem = *volume_filesystem});
  if (!local.ok()) return service::ConfigError("--data-root " + data_root, local.status());
  Logger("storage")->info("volumes under {}: new ones {}", data_root,
                          *volume_filesystem == local::VolumeFilesystem::kLoopExt4
                              ? "each an ext4 file system of its own (loop-ext4)"
                              : "plain directories (directory: workloads can pass the size)");
  return local;
}

// The ceph backend of the --ceph-* flags, mounted under the data root (the mount point is
// this process's own; everything stored is in the cluster). Errors name the flag at fault.
absl::StatusOr<std::unique_ptr<Backend>> OpenCephBackend(const StorageAppOptions& o,
                                                         const std::string& data_root,
                                                         bool sync_writes) {
  ceph::CephBackendOptions options;
  // Absolute: ceph-fuse is handed the same paths.
  std::error_code ec;
  options.cluster.conf_path = std::filesystem::absolute(o.ceph_conf, ec).string();
  options.cluster.keyring_path =
      o.ceph_keyring.empty() ? "" : std::filesystem::absolute(o.ceph_keyring, ec).string();
  options.cluster.client_id = o.ceph_client_id;
  options.fs_name = o.ceph_fs;
  options.mount_point = data_root + "/ceph-mount";
  options.sync_writes = sync_writes;
  for (const auto& [flag, value] : {std::pair{"--ceph-keyring", &o.ceph_keyring},
                                    {"--ceph-fs", &o.ceph_fs},
                                    {"--ceph-client-id", &o.ceph_client_id}}) {
    if (value->empty()) {
      return service::ConfigError(flag, absl::InvalidArgumentError("must not be empty with "
                                                                   "--ceph-conf"));
    }
  }
  auto backend = ceph::NewCephBackend(options);
  if (backend.ok()) {
    return backend;
  }
  const std::string message(backend.status().message());
  const char* flag = message.find("keyring") != std::string::npos     ? "--ceph-keyring"
                     : message.find("ceph fs") != std::string::npos   ? "--ceph-fs"
                     : message.find("client id") != std::string::npos ? "--ceph-client-id"
                                                                      : "--ceph-conf";
  return service::ConfigError(flag, backend.status());
}

// --s3-cors-origins: a comma list of exact origins; "" is none.
absl::StatusOr<std::vector<std::string>> ParseCorsOrigins(absl::string_view list) {
  std::vector<std::string> origins;
  for (absl::string_view origin : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    origin = absl::StripAsciiWhitespace(origin);
    GPUAAS_RETURN_IF_ERROR(s3::CheckCorsOrigin(origin));
    origins.emplace_back(origin);
  }
  return origins;
}

}  // namespace

absl::StatusOr<std::unique_ptr<StorageApp>> StorageApp::Create(const StorageAppOptions& o) {
  std::unique_ptr<StorageApp> app(new StorageApp());
  GPUAAS_RETURN_IF_ERROR(service::ValidateServiceFlags(o.common));
  auto box = SecretBox::FromKeyFile(o.secret_key_file);
  if (!box.ok()) return service::ConfigError("--secret-key-file", box.status());
  app->box_ = std::make_unique<SecretBox>(*std::move(box));
  std::error_code ec;
  const std::string data_root = std::filesystem::absolute(o.data_root, ec).string();
  if (ec) return absl::InvalidArgumentError("--data-root " + o.data_root + ": " + ec.message());
  if (o.local_backend) {
    auto local = OpenLocalBackend(o, data_root);
    if (!local.ok()) return local.status();
    app->backend_ = *std::move(local);
  } else if (o.ceph_conf.empty()) {
    return service::ConfigError("--local-backend",
                                absl::InvalidArgumentError("off needs --ceph-conf: no backend"));
  }
  if (!o.ceph_conf.empty()) {
    auto ceph = OpenCephBackend(o, data_root, o.sync_writes);
    if (!ceph.ok()) return ceph.status();
    Logger("storage")->info("ceph backend: file system {} of {} as client.{}", o.ceph_fs,
                            o.ceph_conf, o.ceph_client_id);
    app->ceph_backend_ = *std::move(ceph);
  }
  auto auth_channel = service::OpenPeerChannel(o.common, o.auth_addr);
  if (!auth_channel.ok()) return service::ConfigError("--auth-addr", auth_channel.status());
  s3::ServerOptions s3_options{.tls_cert_file = o.s3_tls_cert,
                               .tls_key_file = o.s3_tls_key,
                               .limits = o.s3_limits,
                               .share_port = o.s3_share_port};
  GPUAAS_RETURN_IF_ERROR(
      http::ParseListen("--s3-listen", o.s3_listen, s3_options.host, s3_options.port));
  auto cors_origins = ParseCorsOrigins(o.s3_cors_origins);
  if (!cors_origins.ok()) return service::ConfigError("--s3-cors-origins", cors_origins.status());
  s3_options.cors_origins = *std::move(cors_origins);
  auto pool = service::OpenDatabase(kIdentity, o.common, Migrations());
  if (!pool.ok()) return service::StartupError("database", pool.status());
  app->pool_ = *std::move(pool);

  db::Pool& db = *app->pool_;
  std::vector<Backend*> served;
  for (Backend* b : {app->backend_.get(), app->ceph_backend_.get()}) {
    if (b != nullptr) served.push_back(b);
  }
  app->backends_ = std::make_unique<Backends>(std::move(served));
  app->quotas_ = std::make_unique<TenantQuotas>(*auth_channel);
  app->specs_ = std::make_unique<StorageSpecs>(db, app->repo_, *app->backends_);
  app->storages_ = std::make_unique<Storages>(db, app->repo_, *app->backends_, *app->quotas_);
  app->attachments_ = std::make_unique<Attachments>(db, app->repo_, *app->backends_);
  app->accessors_ = std::make_unique<Accessors>(db, app->repo_, *app->box_, app->clock_);
  app->snapshots_ = std::make_unique<Snapshots>(db, app->repo_, *app->backends_);
  app->directory_ = std::make_unique<TableDirectory>(db, app->repo_, *app->box_);
  // Creates and deletes a crash cut short are finished before anyone can ask about them.
  auto created = app->storages_->ResumeCreates();
  auto deleted = created.ok() ? app->storages_->ResumeDeletes() : created;
  if (!deleted.ok()) {
    return service::StartupError("finishing interrupted creates and deletes", deleted.status());
  }
  app->resumed_creates_ = *created;
  app->resumed_deletes_ = *deleted;
  if (*created + *deleted > 0) {
    Logger("storage")->info("finished {} interrupted storage creates and {} deletes", *created,
                            *deleted);
  }

  // One JWKS cache for both planes; the server owns it and outlives the S3 server.
  auto token_verifier =
      authz::NewJwksAuthenticator(authz::NewGrpcJwksSource(*auth_channel), app->clock_);
  authz::Authenticator& tokens = *token_verifier;
  app->server_ = std::make_unique<rpc::Server>(service::ServerOptionsFor(kIdentity, o.common),
                                               std::move(token_verifier));
  app->service_ = std::make_unique<StorageServiceImpl>(
      StorageDomain{*app->specs_, *app->storages_, *app->attachments_, *app->accessors_,
                    *app->snapshots_},
      app->server_->handler());
  app->server_->AddService(app->service_.get());
  app->node_service_ =
      std::make_unique<NodeStorageServiceImpl>(*app->attachments_, app->server_->handler());
  app->server_->AddService(app->node_service_.get());
  // The S3 data plane, over the same backend: keys and buckets from the tables, bearer tokens
  // verified like the gRPC server's.
  s3_options.metrics_registry = &app->server_->metrics_registry();
  app->s3_ = std::make_unique<s3::Server>(s3_options, *app->directory_, *app->backends_, tokens,
                                          app->clock_);
  app->s3_base_url_ = (o.s3_tls_cert.empty() ? "http://" : "https://") + s3_options.host;
  app->upload_expiry_ = absl::Hours(o.upload_expiry_hours);
  return app;
}

StorageApp::~StorageApp() { Close(); }

absl::Status StorageApp::StartBackground() {
  if (absl::Status s = s3_->Start(); !s.ok()) return service::StartupError("S3 endpoint", s);
  Logger("storage")->info("S3 endpoint on {}:{}", s3_base_url_, s3_->port());
  // Now, then every hour.
  upload_expiry_task_ = std::make_unique<PeriodicTask>(
      PeriodicTask::Options{.interval = absl::Hours(1), .run_immediately = true}, [this] {
        for (Backend* b : {backend_.get(), ceph_backend_.get()}) {
          if (b != nullptr) ExpireUploads(*b, clock_, upload_expiry_);
        }
      });
  return absl::OkStatus();
}

void StorageApp::StopBackground() {
  upload_expiry_task_.reset();
  if (s3_) s3_->Stop();
}

}  // namespace gpuaas::storage
