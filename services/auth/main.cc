// gpuaas-auth: wiring only. The shared flags (listen, database, TLS, ...) come from the service
// kit with GPUAAS_AUTH_* environment fallbacks; the defaults match the dev stack, so it starts
// with no configuration.
#include <CLI/CLI.hpp>
#include <string>

#include "libs/authz/verifier.h"
#include "libs/common/clock.h"
#include "libs/common/files.h"
#include "libs/common/logging.h"
#include "libs/rpc/server.h"
#include "libs/service/service_flags.h"
#include "services/auth/auth.h"
#include "services/auth/grpc_service.h"
#include "services/auth/key_store.h"
#include "services/auth/migrations.h"

namespace {

constexpr gpuaas::service::ServiceIdentity kAuth{
    .name = "auth", .grpc_port = 50051, .metrics_port = 9101};

struct AuthFlags {
  gpuaas::service::ServiceFlags common;
  std::string bootstrap_admin_password_file;
  int access_token_ttl_seconds = 900;
  std::string issuer = "gpuaas-auth";
};

void DefineFlags(CLI::App& app, AuthFlags& f) {
  gpuaas::service::AddServiceFlags(app, kAuth, f.common);
  auto env = [](std::string_view flag) { return gpuaas::service::EnvName(kAuth.name, flag); };
  app.add_option("--bootstrap-admin-password-file", f.bootstrap_admin_password_file,
                 "creates user 'admin' with this password on an empty schema")
      ->envname(env("BOOTSTRAP_ADMIN_PASSWORD_FILE"));
  app.add_option("--access-token-ttl-seconds", f.access_token_ttl_seconds)
      ->envname(env("ACCESS_TOKEN_TTL_SECONDS"))
      ->check(CLI::Range(60, 86400));
  app.add_option("--issuer", f.issuer)->envname(env("ISSUER"));
}

int Run(const AuthFlags& f) {
  auto log = gpuaas::Logger("auth");
  if (absl::Status s = gpuaas::service::ValidateServiceFlags(f.common); !s.ok()) {
    log->critical("{}", s.ToString());
    return 2;
  }
  auto pool = gpuaas::service::OpenDatabase(kAuth, f.common, gpuaas::auth::Migrations());
  if (!pool.ok()) {
    log->critical("database: {}", pool.status().ToString());
    return 1;
  }

  gpuaas::SystemClock clock;
  gpuaas::auth::Repository repo;
  const absl::Duration token_ttl = absl::Seconds(f.access_token_ttl_seconds);
  gpuaas::auth::KeyStore keys(**pool, repo, clock,
                              {.publish_retired_for = token_ttl + absl::Minutes(1)});
  if (absl::Status s = keys.Load(); !s.ok()) {
    log->critical("signing keys: {}", s.ToString());
    return 1;
  }
  gpuaas::auth::LoginThrottle throttle(clock);
  gpuaas::auth::Auth auth(**pool, repo, keys, throttle, clock,
                          {.issuer = f.issuer, .access_token_ttl = token_ttl});
  if (!f.bootstrap_admin_password_file.empty()) {
    absl::StatusOr<std::string> password = gpuaas::ReadSecretFile(f.bootstrap_admin_password_file);
    absl::Status s = password.ok() ? auth.Bootstrap(*password) : password.status();
    if (!s.ok()) {
      log->critical("bootstrap admin: {}", s.ToString());
      return 1;
    }
  }

  gpuaas::rpc::Server server(
      gpuaas::service::ServerOptionsFor(kAuth, f.common),
      // The local key source is rate-limited itself (see KeyStore), so an unknown kid may
      // refetch at once: a token signed right after a rotation verifies immediately.
      gpuaas::authz::NewJwksAuthenticator(
          keys.NewLocalJwksSource(), clock,
          {.issuer = f.issuer, .min_refetch_interval = absl::ZeroDuration()}));
  gpuaas::auth::AuthServiceImpl service(auth, server.handler(), server.cpu_handler());
  server.AddService(&service);
  return gpuaas::service::ServeUntilStopped(kAuth, server);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("gpuaas-auth: tenants, users, roles, API keys and tokens");
  AuthFlags flags;
  DefineFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(flags.common.log_level);
  return Run(flags);
}
