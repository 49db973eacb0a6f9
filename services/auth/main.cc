// gpuaas-auth: wiring only. Flags fall back to GPUAAS_AUTH_* environment variables, and the
// defaults match the dev stack (tools/gpuaas up), so it starts with no configuration.
#include <fstream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "libs/authz/verifier.h"
#include "libs/common/clock.h"
#include "libs/common/logging.h"
#include "libs/db/db.h"
#include "libs/rpc/server.h"
#include "services/auth/auth.h"
#include "services/auth/grpc_service.h"
#include "services/auth/key_store.h"
#include "services/auth/migrations.h"

namespace {

struct Flags {
  std::string listen = "0.0.0.0:50051";
  std::string metrics_listen = "0.0.0.0:9101";
  std::string db_dsn = "postgresql://gpuaas_auth@127.0.0.1:55432/gpuaas";
  int db_pool_size = 8;
  int db_wait_seconds = 30;
  int workers = 8;
  std::string bootstrap_admin_password_file;
  int access_token_ttl_seconds = 900;
  std::string issuer = "gpuaas-auth";
  std::string log_level = "info";
  gpuaas::rpc::TlsOptions tls;
};

void DefineFlags(CLI::App& app, Flags& f) {
  auto env = [](const char* name) { return std::string("GPUAAS_AUTH_") + name; };
  app.add_option("--listen", f.listen, "gRPC listen address")->envname(env("LISTEN"));
  app.add_option("--metrics-listen", f.metrics_listen, "Prometheus /metrics address ('' = off)")
      ->envname(env("METRICS_LISTEN"));
  app.add_option("--db-dsn", f.db_dsn, "PostgreSQL connection string")->envname(env("DB_DSN"));
  app.add_option("--db-pool-size", f.db_pool_size)->envname(env("DB_POOL_SIZE"))->check(CLI::Range(1, 256));
  app.add_option("--db-wait-seconds", f.db_wait_seconds, "how long to wait for PostgreSQL at start")
      ->envname(env("DB_WAIT_SECONDS"))->check(CLI::Range(0, 3600));
  app.add_option("--workers", f.workers, "handler threads")->envname(env("WORKERS"))->check(CLI::Range(1, 512));
  app.add_option("--bootstrap-admin-password-file", f.bootstrap_admin_password_file,
                 "creates user 'admin' with this password on an empty schema")
      ->envname(env("BOOTSTRAP_ADMIN_PASSWORD_FILE"));
  app.add_option("--access-token-ttl-seconds", f.access_token_ttl_seconds)
      ->envname(env("ACCESS_TOKEN_TTL_SECONDS"))->check(CLI::Range(60, 86400));
  app.add_option("--issuer", f.issuer)->envname(env("ISSUER"));
  app.add_option("--log-level", f.log_level)->envname(env("LOG_LEVEL"))
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_option("--tls-cert", f.tls.cert_file)->envname(env("TLS_CERT"))->check(CLI::ExistingFile);
  app.add_option("--tls-key", f.tls.key_file)->envname(env("TLS_KEY"))->check(CLI::ExistingFile);
  app.add_option("--tls-ca", f.tls.ca_file, "CA for client certificates")->envname(env("TLS_CA"))
      ->check(CLI::ExistingFile);
  app.add_flag("--tls-require-client-cert", f.tls.require_client_cert)
      ->envname(env("TLS_REQUIRE_CLIENT_CERT"));
}

absl::StatusOr<std::string> ReadSecretFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::FailedPreconditionError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// PostgreSQL may still be starting (compose, systemd): retry migrations for a while.
absl::Status MigrateWhenReady(gpuaas::db::Pool& pool, int wait_seconds) {
  absl::Time deadline = absl::Now() + absl::Seconds(wait_seconds);
  while (true) {
    absl::Status s = gpuaas::db::Migrate(pool, "auth", gpuaas::auth::Migrations());
    if (s.ok() || s.code() != absl::StatusCode::kUnavailable || absl::Now() > deadline) return s;
    gpuaas::Logger("auth")->warn("waiting for PostgreSQL: {}", s.ToString());
    absl::SleepFor(absl::Seconds(1));
  }
}

int Run(const Flags& f) {
  auto log = gpuaas::Logger("auth");
  if (f.tls.cert_file.empty() != f.tls.key_file.empty()) {
    log->critical("--tls-cert and --tls-key go together");
    return 2;
  }
  auto pool = gpuaas::db::Pool::Create({.dsn = f.db_dsn, .size = f.db_pool_size});
  if (!pool.ok()) {
    log->critical("database pool: {}", pool.status().ToString());
    return 1;
  }
  if (absl::Status s = MigrateWhenReady(**pool, f.db_wait_seconds); !s.ok()) {
    log->critical("migrations: {}", s.ToString());
    return 1;
  }

  gpuaas::SystemClock clock;
  gpuaas::auth::Repository repo;
  gpuaas::auth::KeyStore keys(**pool, repo, clock,
                              {.publish_retired_for = absl::Seconds(f.access_token_ttl_seconds) +
                                                      absl::Minutes(1)});
  if (absl::Status s = keys.Load(); !s.ok()) {
    log->critical("signing keys: {}", s.ToString());
    return 1;
  }
  gpuaas::auth::LoginThrottle throttle(clock);
  gpuaas::auth::Auth auth(**pool, repo, keys, throttle, clock,
                          {.issuer = f.issuer,
                           .access_token_ttl = absl::Seconds(f.access_token_ttl_seconds)});
  if (!f.bootstrap_admin_password_file.empty()) {
    absl::StatusOr<std::string> password = ReadSecretFile(f.bootstrap_admin_password_file);
    absl::Status s = password.ok() ? auth.Bootstrap(*password) : password.status();
    if (!s.ok()) {
      log->critical("bootstrap admin: {}", s.ToString());
      return 1;
    }
  }

  gpuaas::rpc::Server server(
      {.name = "auth",
       .listen_address = f.listen,
       .metrics_address = f.metrics_listen,
       .tls = f.tls,
       .worker_threads = f.workers},
      // The local key source is rate-limited itself (see KeyStore), so an unknown kid may
      // refetch at once: a token signed right after a rotation verifies immediately.
      gpuaas::authz::NewJwksAuthenticator(
          keys.NewLocalJwksSource(), clock,
          {.issuer = f.issuer, .min_refetch_interval = absl::ZeroDuration()}));
  gpuaas::auth::AuthServiceImpl service(auth, server.handler(), server.cpu_handler());
  server.AddService(&service);
  if (absl::Status s = server.Start(); !s.ok()) {
    log->critical("server: {}", s.ToString());
    return 1;
  }
  log->info("gpuaas-auth serving on port {} (metrics port {})", server.port(), server.metrics_port());
  server.Wait();
  log->info("gpuaas-auth stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("gpuaas-auth: tenants, users, roles, API keys and tokens");
  Flags flags;
  DefineFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(flags.log_level);
  return Run(flags);
}
