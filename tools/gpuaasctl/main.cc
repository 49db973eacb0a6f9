// gpuaasctl: the command-line client for the gpuaas API. Wiring only: global flags, the command
// groups, and the exit-code contract scripts rely on (0 ok, 1 error, 2 usage).
#include <CLI/CLI.hpp>
#include <iostream>

#include "absl/status/status.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/context.h"

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  gpuaas::ctl::Context ctx;
  gpuaas::ctl::GlobalOptions& o = ctx.options();

  CLI::App app(
      "gpuaasctl: manage tenants, users, memberships, API keys, GPU specs, stocks, nodes, "
      "storages, "
      "S3 accessors, images, GPU instances and their usage on a gpuaas stack");
  // Global flags are accepted after the subcommand too: `gpuaasctl tenants list -o json`.
  app.fallthrough();
  app.require_subcommand(1);
  app.add_option("--auth-addr", o.auth_addr,
                 "auth service host:port (default: $GPUAAS_AUTH_ADDR, .gpuaas/stack.env, "
                 "localhost:17051)");
  app.add_option("--stock-addr", o.stock_addr,
                 "stock service host:port, for specs, stocks and nodes (default: "
                 "$GPUAAS_STOCK_ADDR, .gpuaas/stack.env, localhost:17052)");
  app.add_option("--storage-addr", o.storage_addr,
                 "storage service host:port, for storage specs, storages and accessors (default: "
                 "$GPUAAS_STORAGE_ADDR, .gpuaas/stack.env, localhost:17053)");
  app.add_option("--instance-addr", o.instance_addr,
                 "instance service host:port, for instances, images and usage (default: "
                 "$GPUAAS_INSTANCE_ADDR, .gpuaas/stack.env, localhost:17054)");
  app.footer(
      "An address may list a service's replicas, host:port,host:port: calls spread over them, and\n"
      "reads and keyed creates a dropped replica did not answer are retried on another.");
  app.add_option("-o,--output", o.output, "output format")->check(CLI::IsMember({"table", "json"}));
  app.add_option("--timeout", o.timeout, "deadline of each call");
  app.add_option("--ca", o.ca_file, "CA certificate: use TLS (default: $GPUAAS_TLS_CA, stack.env)")
      ->check(CLI::ExistingFile);
  app.add_option("--cert", o.cert_file, "client certificate for mutual TLS ($GPUAAS_TLS_CERT)")
      ->check(CLI::ExistingFile);
  app.add_option("--key", o.key_file, "client private key for mutual TLS ($GPUAAS_TLS_KEY)")
      ->check(CLI::ExistingFile);

  gpuaas::ctl::AddAuthCommands(app, ctx);
  gpuaas::ctl::AddTenantCommands(app, ctx);
  gpuaas::ctl::AddUserCommands(app, ctx);
  gpuaas::ctl::AddMemberCommands(app, ctx);
  gpuaas::ctl::AddApiKeyCommands(app, ctx);
  gpuaas::ctl::AddSpecCommands(app, ctx);
  gpuaas::ctl::AddStockCommands(app, ctx);
  gpuaas::ctl::AddNodeCommands(app, ctx);
  gpuaas::ctl::AddStorageSpecCommands(app, ctx);
  gpuaas::ctl::AddStorageCommands(app, ctx);
  gpuaas::ctl::AddAccessorCommands(app, ctx);
  gpuaas::ctl::AddImageCommands(app, ctx);
  gpuaas::ctl::AddInstanceCommands(app, ctx);
  gpuaas::ctl::AddInstanceLogCommands(app, ctx);
  gpuaas::ctl::AddInstanceSessionCommands(app, ctx);
  gpuaas::ctl::AddUsageCommands(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help is a successful exit; everything else is a usage error, always code 2.
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  if (!ctx.action()) {
    std::cerr << app.help();
    return kExitUsage;
  }
  absl::Status s = ctx.action()();
  if (!s.ok()) {
    std::cerr << "error: " << absl::StatusCodeToString(s.code());
    if (!s.message().empty()) {
      std::cerr << ": " << s.message();
    }
    std::cerr << "\n";
    return kExitError;
  }
  return 0;
}
