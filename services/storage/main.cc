// gpuaas-storage: flags only; services/storage/app.h wires the service. The shared flags come
// from the service kit with GPUAAS_STORAGE_* environment fallbacks; tokens are verified locally
// against the auth service's JWKS, and tenants' storage quotas are read from the auth service
// with each caller's own token.
#include <CLI/CLI.hpp>

#include "libs/common/logging.h"
#include "libs/service/run_app.h"
#include "services/storage/app.h"

int main(int argc, char** argv) {
  using gpuaas::storage::StorageApp;
  CLI::App app("gpuaas-storage: storage specs, tenant volumes, attachments and S3 accessors");
  gpuaas::storage::StorageAppOptions f;
  auto env = [](std::string_view flag) { return gpuaas::service::EnvName("storage", flag); };
  gpuaas::service::AddServiceFlags(app, StorageApp::kIdentity, f.common);
  app.add_option("--auth-addr", f.auth_addr,
                 "the auth service, for the keys that verify tokens and tenants' quotas")
      ->envname(env("AUTH_ADDR"))
      ->capture_default_str();
  app.add_option("--data-root", f.data_root,
                 "the local backend's directory: one directory per storage under it (relative "
                 "paths from the working directory)")
      ->envname(env("DATA_ROOT"))
      ->capture_default_str();
  app.add_option("--secret-key-file", f.secret_key_file,
                 "32 random bytes that seal accessors' S3 secrets in the database (make it once: "
                 "head -c 32 /dev/urandom > FILE; losing it invalidates every accessor)")
      ->envname(env("SECRET_KEY_FILE"))
      ->capture_default_str();
  app.add_option("--s3-listen", f.s3_listen, "the S3-compatible data plane's HTTP address")
      ->envname(env("S3_LISTEN"))
      ->capture_default_str();
  app.add_option("--s3-tls-cert", f.s3_tls_cert, "PEM certificate: serve S3 over HTTPS")
      ->envname(env("S3_TLS_CERT"));
  app.add_option("--s3-tls-key", f.s3_tls_key, "PEM key of --s3-tls-cert")
      ->envname(env("S3_TLS_KEY"));
  app.add_option("--sync-writes", f.sync_writes,
                 "fsync every object and its directory before answering a write (off only where "
                 "the disk's cache survives power loss)")
      ->envname(env("SYNC_WRITES"))
      ->capture_default_str();
  app.add_option("--upload-expiry-hours", f.upload_expiry_hours,
                 "multipart uploads neither completed nor aborted within this long are dropped")
      ->envname(env("UPLOAD_EXPIRY_HOURS"))
      ->check(CLI::Range(0.01, 24.0 * 365))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(f.common.log_level);
  return gpuaas::service::RunApp<StorageApp>(f);
}
