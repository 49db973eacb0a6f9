// gpuaas-instance: flags only; services/instance/app.h wires the service. The API (InstanceService,
// ImageService) writes what users ask for; the back half (BackHalf: the reconciler and
// NodeWorkloadService) gets instances there. Tokens are verified locally against the auth service's
// JWKS; specs, storages and quotas are read with each caller's own token (specs and quotas kept
// --lookup-cache-seconds per replica), and the reconciler calls stock and storage with the
// service's API key. Every flag has a GPUAAS_INSTANCE_* environment fallback.
#include <CLI/CLI.hpp>

#include "libs/common/logging.h"
#include "libs/service/run_app.h"
#include "services/instance/app.h"

int main(int argc, char** argv) {
  CLI::App app(
      "gpuaas-instance: GPU instances (create, start, stop, delete, watch, usage), the image "
      "catalog, the reconciler that runs them on stocks, and the agents' workload sets");
  using gpuaas::instance::InstanceApp;
  gpuaas::instance::InstanceAppOptions flags;
  auto env = [](std::string_view flag) { return gpuaas::service::EnvName("instance", flag); };
  gpuaas::service::AddServiceFlags(app, InstanceApp::kIdentity, flags.common);
  app.add_option("--auth-addr", flags.auth_addr,
                 "the auth service: the keys that verify tokens, and tenants' quotas")
      ->envname(env("AUTH_ADDR"))
      ->capture_default_str();
  app.add_option("--lookup-cache-seconds", flags.lookup_cache_seconds,
                 "how long a spec or a tenant's quota read for a create serves this replica's "
                 "next creates (so a quota lowered takes this long to bind them); 0: read both "
                 "for every create")
      ->envname(env("LOOKUP_CACHE_SECONDS"))
      ->check(CLI::Range(0.0, 60.0))
      ->capture_default_str();
  app.add_option("--access-domain", flags.access_domain,
                 "the access proxy's domain in access URLs (<instance>-<port>.<domain>), with "
                 "its port unless the scheme's default")
      ->envname(env("ACCESS_DOMAIN"))
      ->capture_default_str();
  app.add_option("--access-scheme", flags.access_scheme,
                 "http, or https when the access proxy serves TLS")
      ->envname(env("ACCESS_SCHEME"))
      ->check(CLI::IsMember({"http", "https"}))
      ->capture_default_str();
  app.add_option("--access-code-ttl", flags.access_code_ttl_seconds,
                 "seconds a one-time access link stays usable")
      ->envname(env("ACCESS_CODE_TTL"))
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  gpuaas::instance::AddBackHalfFlags(app, "instance", flags.back);
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(flags.common.log_level);
  return gpuaas::service::RunApp<InstanceApp>(flags);
}
