// gpuaas-auth: flags only; services/auth/app.h wires the service. The shared flags (listen,
// database, TLS, ...) come from the service kit with GPUAAS_AUTH_* environment fallbacks; the
// defaults match the dev stack, so it starts with no configuration.
#include <CLI/CLI.hpp>

#include "libs/common/logging.h"
#include "libs/service/env_options.h"
#include "libs/service/run_app.h"
#include "services/auth/app.h"

int main(int argc, char** argv) {
  using gpuaas::auth::AuthApp;
  CLI::App app("gpuaas-auth: tenants, users, roles, API keys and tokens");
  gpuaas::auth::AuthAppOptions options;
  int access_token_ttl_seconds = 900;
  gpuaas::service::EnvOptions flags(app, "auth");
  gpuaas::service::AddServiceFlags(app, AuthApp::kIdentity, options.common);
  flags.Add("--bootstrap-admin-password-file", options.bootstrap_admin_password_file,
            "creates user 'admin' with this password on an empty schema");
  flags.Add("--access-token-ttl-seconds", access_token_ttl_seconds)->check(CLI::Range(60, 86400));
  flags.Add("--issuer", options.auth.issuer);
  CLI11_PARSE(app, argc, argv);
  options.auth.access_token_ttl = absl::Seconds(access_token_ttl_seconds);
  gpuaas::SetLogLevel(options.common.log_level);
  return gpuaas::service::RunApp<AuthApp>(options);
}
