// gpuaas-storage: wiring only. The shared flags come from the service kit with GPUAAS_STORAGE_*
// environment fallbacks; tokens are verified locally against the auth service's JWKS, and
// tenants' storage quotas are read from the auth service with each caller's own token.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/synchronization/notification.h"
#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/common/clock.h"
#include "libs/common/logging.h"
#include "libs/rpc/server.h"
#include "libs/service/service_flags.h"
#include "services/storage/accessors.h"
#include "services/storage/attachments.h"
#include "services/storage/backends.h"
#include "services/storage/grpc_service.h"
#include "services/storage/local/local_backend.h"
#include "services/storage/migrations.h"
#include "services/storage/s3/server.h"
#include "services/storage/secret_box.h"
#include "services/storage/specs.h"
#include "services/storage/storages.h"
#include "services/storage/table_directory.h"
#include "services/storage/tenant_quotas.h"

namespace {

constexpr gpuaas::service::ServiceIdentity kStorage{
    .name = "storage", .grpc_port = 50053, .metrics_port = 9103};

struct StorageFlags {
  gpuaas::service::ServiceFlags common;
  std::string auth_addr = "127.0.0.1:50051";
  std::string data_root = ".gpuaas/storage";
  std::string secret_key_file = ".gpuaas/storage-secret.key";
  std::string s3_listen = "127.0.0.1:9000";
  std::string s3_tls_cert;
  std::string s3_tls_key;
  double upload_expiry_hours = 24 * 7;
  bool sync_writes = true;
};

void DefineFlags(CLI::App& app, StorageFlags& f) {
  gpuaas::service::AddServiceFlags(app, kStorage, f.common);
  app.add_option("--auth-addr", f.auth_addr,
                 "the auth service, for the keys that verify tokens and tenants' quotas")
      ->envname(gpuaas::service::EnvName(kStorage.name, "AUTH_ADDR"))
      ->capture_default_str();
  app.add_option("--data-root", f.data_root,
                 "the local backend's directory: one directory per storage under it (relative "
                 "paths from the working directory)")
      ->envname(gpuaas::service::EnvName(kStorage.name, "DATA_ROOT"))
      ->capture_default_str();
  app.add_option("--secret-key-file", f.secret_key_file,
                 "32 random bytes that seal accessors' S3 secrets in the database (make it once: "
                 "head -c 32 /dev/urandom > FILE; losing it invalidates every accessor)")
      ->envname(gpuaas::service::EnvName(kStorage.name, "SECRET_KEY_FILE"))
      ->capture_default_str();
  app.add_option("--s3-listen", f.s3_listen, "the S3-compatible data plane's HTTP address")
      ->envname(gpuaas::service::EnvName(kStorage.name, "S3_LISTEN"))
      ->capture_default_str();
  app.add_option("--s3-tls-cert", f.s3_tls_cert, "PEM certificate: serve S3 over HTTPS")
      ->envname(gpuaas::service::EnvName(kStorage.name, "S3_TLS_CERT"));
  app.add_option("--s3-tls-key", f.s3_tls_key, "PEM key of --s3-tls-cert")
      ->envname(gpuaas::service::EnvName(kStorage.name, "S3_TLS_KEY"));
  app.add_option("--sync-writes", f.sync_writes,
                 "fsync every object and its directory before answering a write (off only where "
                 "the disk's cache survives power loss)")
      ->envname(gpuaas::service::EnvName(kStorage.name, "SYNC_WRITES"))
      ->capture_default_str();
  app.add_option("--upload-expiry-hours", f.upload_expiry_hours,
                 "multipart uploads neither completed nor aborted within this long are dropped")
      ->envname(gpuaas::service::EnvName(kStorage.name, "UPLOAD_EXPIRY_HOURS"))
      ->check(CLI::Range(0.01, 24.0 * 365))
      ->capture_default_str();
}

// "host:port" into the S3 server's options. INVALID_ARGUMENT naming the flag.
absl::Status ParseS3Listen(const std::string& listen, gpuaas::storage::s3::ServerOptions& out) {
  const size_t colon = listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError("--s3-listen: want host:port, got \"" + listen + "\"");
  }
  out.host = listen.substr(0, colon);
  out.port = port;
  return absl::OkStatus();
}

// Drops abandoned multipart uploads now and then every hour until `stop`.
void ExpireUploads(gpuaas::storage::Backend& backend, const gpuaas::Clock& clock,
                   absl::Duration expiry, absl::Notification& stop) {
  auto log = gpuaas::Logger("storage");
  do {
    absl::StatusOr<int> dropped = backend.ExpireUploads(clock.Now() - expiry);
    if (!dropped.ok()) {
      log->warn("expiring multipart uploads: {}", dropped.status().ToString());
    } else if (*dropped > 0) {
      log->info("dropped {} multipart uploads older than {}", *dropped,
                absl::FormatDuration(expiry));
    }
  } while (!stop.WaitForNotificationWithTimeout(absl::Hours(1)));
}

int Run(const StorageFlags& f) {
  auto log = gpuaas::Logger("storage");
  if (absl::Status s = gpuaas::service::ValidateServiceFlags(f.common); !s.ok()) {
    log->critical("{}", s.ToString());
    return 2;
  }
  auto box = gpuaas::storage::SecretBox::FromKeyFile(f.secret_key_file);
  if (!box.ok()) {
    log->critical("--secret-key-file: {}", box.status().ToString());
    return 2;
  }
  std::error_code ec;
  const std::string data_root = std::filesystem::absolute(f.data_root, ec).string();
  if (ec) {
    log->critical("--data-root {}: {}", f.data_root, ec.message());
    return 2;
  }
  auto local = gpuaas::storage::local::NewLocalBackend(
      {.data_root = data_root, .sync_writes = f.sync_writes});
  if (!local.ok()) {
    log->critical("--data-root {}: {}", data_root, local.status().ToString());
    return 2;
  }
  auto auth_channel = gpuaas::service::OpenPeerChannel(f.common, f.auth_addr);
  if (!auth_channel.ok()) {
    log->critical("auth channel: {}", auth_channel.status().ToString());
    return 2;
  }
  auto pool = gpuaas::service::OpenDatabase(kStorage, f.common, gpuaas::storage::Migrations());
  if (!pool.ok()) {
    log->critical("database: {}", pool.status().ToString());
    return 1;
  }

  gpuaas::SystemClock clock;
  gpuaas::storage::Repository repo;
  const gpuaas::storage::Backends backends({local->get()});
  const gpuaas::storage::TenantQuotas quotas(*auth_channel);
  gpuaas::storage::StorageSpecs specs(**pool, repo, backends);
  gpuaas::storage::Storages storages(**pool, repo, backends, quotas);
  gpuaas::storage::Attachments attachments(**pool, repo, backends);
  gpuaas::storage::Accessors accessors(**pool, repo, *box, clock);
  // Creates and deletes a crash cut short are finished before anyone can ask about them.
  auto created = storages.ResumeCreates();
  auto deleted = created.ok() ? storages.ResumeDeletes() : created;
  if (!deleted.ok()) {
    log->critical("finishing interrupted creates and deletes: {}", deleted.status().ToString());
    return 1;
  }
  if (*created + *deleted > 0) {
    log->info("finished {} interrupted storage creates and {} deletes", *created, *deleted);
  }

  // One JWKS cache for both planes; the server owns it and outlives the S3 server.
  auto token_verifier =
      gpuaas::authz::NewJwksAuthenticator(gpuaas::authz::NewGrpcJwksSource(*auth_channel), clock);
  gpuaas::authz::Authenticator& tokens = *token_verifier;
  gpuaas::rpc::Server server(gpuaas::service::ServerOptionsFor(kStorage, f.common),
                             std::move(token_verifier));
  gpuaas::storage::StorageServiceImpl storage_service({specs, storages, attachments, accessors},
                                                      server.handler());
  server.AddService(&storage_service);

  // The S3 data plane, over the same backend: keys and buckets from the tables, bearer tokens
  // verified like the gRPC server's.
  gpuaas::storage::s3::ServerOptions s3_options{.tls_cert_file = f.s3_tls_cert,
                                                .tls_key_file = f.s3_tls_key,
                                                .metrics_registry = &server.metrics_registry()};
  if (absl::Status s = ParseS3Listen(f.s3_listen, s3_options); !s.ok()) {
    log->critical("{}", s.ToString());
    return 2;
  }
  gpuaas::storage::TableDirectory directory(**pool, repo, *box);
  gpuaas::storage::s3::Server s3(s3_options, directory, **local, tokens, clock);
  if (absl::Status s = s3.Start(); !s.ok()) {
    log->critical("S3 endpoint {}: {}", f.s3_listen, s.ToString());
    return 1;
  }
  log->info("S3 endpoint on {}://{}:{}", f.s3_tls_cert.empty() ? "http" : "https", s3_options.host,
            s3.port());
  absl::Notification stop;
  std::thread expirer(
      [&] { ExpireUploads(**local, clock, absl::Hours(f.upload_expiry_hours), stop); });

  const int code = gpuaas::service::ServeUntilStopped(kStorage, server);
  stop.Notify();
  expirer.join();
  s3.Stop();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("gpuaas-storage: storage specs, tenant volumes, attachments and S3 accessors");
  StorageFlags flags;
  DefineFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(flags.common.log_level);
  return Run(flags);
}
