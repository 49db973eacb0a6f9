// gpuaas-storage: flags only; services/storage/app.h wires the service. The shared flags come
// from the service kit with GPUAAS_STORAGE_* environment fallbacks; tokens are verified locally
// against the auth service's JWKS, and tenants' storage quotas are read from the auth service
// with each caller's own token.
#include <CLI/CLI.hpp>

#include "libs/common/logging.h"
#include "libs/service/env_options.h"
#include "libs/service/run_app.h"
#include "services/storage/app.h"

int main(int argc, char** argv) {
  using gpuaas::storage::StorageApp;
  CLI::App app("gpuaas-storage: storage specs, tenant volumes, attachments and S3 accessors");
  gpuaas::storage::StorageAppOptions f;
  gpuaas::service::EnvOptions options(app, "storage");
  gpuaas::service::AddServiceFlags(app, StorageApp::kIdentity, f.common);
  options.Add("--auth-addr", f.auth_addr,
              "the auth service, for the keys that verify tokens and tenants' quotas");
  options.Add("--data-root", f.data_root,
              "the local backend's directory: one directory per storage under it (relative "
              "paths from the working directory)");
  options
      .Add("--volume-filesystem", f.volume_filesystem,
           "how each storage is kept under --data-root: loop-ext4 (its own ext4 file system, a "
           "sparse image of its size loop-mounted: the kernel stops every writer at the size; "
           "needs root and loop devices) or directory (a plain directory: only S3 writes respect "
           "the size, for machines without loop devices)")
      ->check(CLI::IsMember({"loop-ext4", "directory"}));
  app.add_option("--local-backend", f.local_backend,
                 "serve the local backend (storages under --data-root); off: the ceph backend "
                 "alone, so that replicas of this service hold no tenant's data of their own "
                 "(--data-root then holds only the ceph-fuse mount point)")
      ->envname(gpuaas::service::FlagEnvName("storage", "--local-backend"))
      ->capture_default_str();
  options.Add("--ceph-conf", f.ceph_conf,
              "a Ceph cluster's ceph.conf: storages of specs with backend_class ceph are CephFS "
              "subvolumes there (served beside the local backend, through a ceph-fuse mount "
              "under --data-root); empty: no ceph backend");
  options.Add("--ceph-keyring", f.ceph_keyring,
              "the keyring file of --ceph-client-id (its path goes to librados and ceph-fuse; "
              "the key never appears on a command line)");
  options.Add("--ceph-fs", f.ceph_fs, "the CephFS file system that holds the subvolumes");
  options.Add("--ceph-client-id", f.ceph_client_id,
              "the cephx client (without \"client.\") that creates, grows and mounts subvolumes");
  options.Add("--secret-key-file", f.secret_key_file,
              "32 random bytes that seal accessors' S3 secrets in the database (make it once: "
              "head -c 32 /dev/urandom > FILE; losing it invalidates every accessor)");
  options.Add("--s3-listen", f.s3_listen, "the S3-compatible data plane's HTTP address");
  app.add_flag("--s3-share-port", f.s3_share_port,
               "let other processes listen on --s3-listen's port too (SO_REUSEPORT): replicas "
               "on one host behind one S3 address, the kernel spreading connections")
      ->envname(gpuaas::service::FlagEnvName("storage", "--s3-share-port"));
  options.Add("--s3-tls-cert", f.s3_tls_cert, "PEM certificate: serve S3 over HTTPS");
  options.Add("--s3-tls-key", f.s3_tls_key, "PEM key of --s3-tls-cert");
  options
      .Add("--s3-max-connections-per-client", f.s3_limits.max_connections_per_client,
           "open S3 connections one client address may hold; more are answered 503 SlowDown")
      ->check(CLI::PositiveNumber);
  options.Add("--s3-header-timeout", f.s3_limits.header_timeout,
              "how long an S3 client may take to send a request's head (from connect: the TLS "
              "handshake too); a slower one is disconnected without holding a worker");
  options.Add("--s3-body-idle-timeout", f.s3_limits.body_idle_timeout,
              "how long an S3 request body may pause before the connection is closed");
  options.Add("--s3-body-rate-grace", f.s3_limits.body_rate_grace,
              "after this long waiting for an S3 request body, it must keep --s3-body-min-rate");
  options
      .Add("--s3-body-min-rate", f.s3_limits.body_min_rate,
           "bytes per second an S3 request body must average after --s3-body-rate-grace, or it "
           "is answered 408 and closed (a trickle would hold a worker); 0: no minimum")
      ->check(CLI::NonNegativeNumber);
  options.Add("--s3-cors-origins", f.s3_cors_origins,
              "web pages' origins (comma list, exact: http://127.0.0.1:8090) whose browser "
              "requests the S3 endpoint answers with CORS headers, so the web console's file "
              "browser can send presigned requests; empty: no CORS");
  app.add_option("--sync-writes", f.sync_writes,
                 "fsync every object and its directory before answering a write (off only where "
                 "the disk's cache survives power loss)")
      ->envname(gpuaas::service::FlagEnvName("storage", "--sync-writes"))
      ->capture_default_str();
  options
      .Add("--upload-expiry-hours", f.upload_expiry_hours,
           "multipart uploads neither completed nor aborted within this long are dropped")
      ->check(CLI::Range(0.01, 24.0 * 365));
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(f.common.log_level);
  return gpuaas::service::RunApp<StorageApp>(f);
}
