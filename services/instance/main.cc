// gpuaas-instance: flags only; services/instance/app.h wires the service. The API (InstanceService,
// ImageService) writes what users ask for; the back half (BackHalf: the reconciler and
// NodeWorkloadService) gets instances there. Tokens are verified locally against the auth service's
// JWKS; specs, storages and quotas are read with each caller's own token (specs and quotas kept
// --lookup-cache-seconds per replica), and the reconciler calls stock and storage with the
// service's API key. Every flag has a GPUAAS_INSTANCE_* environment fallback.
#include <CLI/CLI.hpp>

#include "libs/common/logging.h"
#include "libs/service/env_options.h"
#include "libs/service/run_app.h"
#include "services/instance/app.h"

int main(int argc, char** argv) {
  CLI::App app(
      "gpuaas-instance: GPU instances (create, start, stop, delete, watch, usage), the image "
      "catalog, the reconciler that runs them on stocks, and the agents' workload sets");
  using gpuaas::instance::InstanceApp;
  gpuaas::instance::InstanceAppOptions flags;
  gpuaas::service::EnvOptions options(app, "instance");
  gpuaas::service::AddServiceFlags(app, InstanceApp::kIdentity, flags.common);
  options.Add("--auth-addr", flags.auth_addr,
              "the auth service: the keys that verify tokens, and tenants' quotas");
  options
      .Add("--lookup-cache-seconds", flags.lookup_cache_seconds,
           "how long a spec or a tenant's quota read for a create serves this replica's "
           "next creates (so a quota lowered takes this long to bind them); 0: read both "
           "for every create")
      ->check(CLI::Range(0.0, 60.0));
  options.Add("--access-domain", flags.access_domain,
              "the access proxy's domain in access URLs (<instance>-<port>.<domain>), with "
              "its port unless the scheme's default");
  options
      .Add("--access-scheme", flags.access_scheme,
           "http, or https when the access proxy serves TLS")
      ->check(CLI::IsMember({"http", "https"}));
  options
      .Add("--access-code-ttl", flags.access_code_ttl_seconds,
           "seconds a one-time access link stays usable")
      ->check(CLI::Range(1.0, 3600.0));
  options
      .Add("--session-recheck", flags.session_recheck_seconds,
           "seconds between checks that an open terminal or port-forward's user may still use "
           "its instance and that it still runs; one that may not is closed")
      ->check(CLI::Range(0.1, 3600.0));
  options
      .Add("--allowed-registries", flags.allowed_registries,
           "registries (host:port,...) that images may name although they sit on a loopback, "
           "link-local, private (RFC 1918, ULA), CGNAT, multicast or unspecified address: the "
           "dev stack's own, a LAN mirror. Every other such address is refused")
      ->delimiter(',');
  options
      .Add("--insecure-registries", flags.insecure_registries,
           "registries (host:port,...) spoken to without verifying TLS, or over plain HTTP "
           "when they speak no TLS; every other registry's certificate is verified")
      ->delimiter(',');
  options
      .Add("--registry-timeout-seconds", flags.registry_timeout_seconds,
           "each request to a registry while pinning an image (connect included); a pin makes "
           "at most three")
      ->check(CLI::Range(0.5, 120.0));
  gpuaas::instance::AddBackHalfFlags(app, "instance", flags.back);
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(flags.common.log_level);
  return gpuaas::service::RunApp<InstanceApp>(flags);
}
