// What every gpuaas service binary configures the same way: where it listens, its database,
// TLS, threads and log level, each a flag with an environment fallback GPUAAS_<NAME>_<FLAG>
// (`--db-dsn` <- GPUAAS_AUTH_DB_DSN), and defaults that match the dev stack (tools/gpuaas up),
// so every service runs with no configuration. A service's main.cc adds its own flags next to
// these, then calls OpenDatabase and ServerOptionsFor.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/db/db.h"
#include "libs/rpc/server.h"

namespace grpc {
class Channel;
}

namespace CLI {
class App;
}

namespace gpuaas::service {

// The parts that differ per service: its name (logger, schema, role, environment prefix) and
// its default ports (design: auth 17051 / 9101, stock 17052 / 9102, ...).
struct ServiceIdentity {
  std::string_view name;  // "auth"
  int grpc_port = 0;
  int metrics_port = 0;
};

struct ServiceFlags {
  std::string listen;
  std::string metrics_listen;
  std::string db_dsn;
  int db_pool_size = 8;
  int db_wait_seconds = 30;
  int workers = 8;
  std::string log_level = "info";
  rpc::TlsOptions tls;
};

// Adds --listen, --metrics-listen, --db-dsn, --db-pool-size, --db-wait-seconds, --workers,
// --log-level, --tls-cert, --tls-key, --tls-ca, --tls-require-client-cert to `app`, with
// their environment fallbacks and range checks, and fills `flags` with the defaults.
void AddServiceFlags(CLI::App& app, const ServiceIdentity& id, ServiceFlags& flags);

// The environment variable behind a flag: ("auth", "DB_DSN") -> "GPUAAS_AUTH_DB_DSN".
std::string EnvName(std::string_view service, std::string_view flag);

// Checks the combinations a range check cannot (a certificate without its key). Error:
// INVALID_ARGUMENT naming the flags.
absl::Status ValidateServiceFlags(const ServiceFlags& flags);

// Opens the pool and applies `migrations` to the service's schema, waiting up to
// --db-wait-seconds for PostgreSQL to come up (compose, systemd start both at once). Blocks.
// Errors: as db::Pool::Create and db::Migrate; UNAVAILABLE when the wait ran out.
absl::StatusOr<std::unique_ptr<db::Pool>> OpenDatabase(const ServiceIdentity& id,
                                                       const ServiceFlags& flags,
                                                       std::span<const db::Migration> migrations);

// Starts `server`, logs where it serves, and blocks until a signal has drained it. Returns the
// process's exit code: 0 after a clean stop, 1 when it could not start.
int ServeUntilStopped(const ServiceIdentity& id, rpc::Server& server);

// A channel to another gpuaas service (auth for its keys and quotas, stock, storage). With
// TLS, the service's own certificate is its client certificate towards its peers.
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenPeerChannel(const ServiceFlags& flags,
                                                               const std::string& address);

// The server options the flags describe.
rpc::ServerOptions ServerOptionsFor(const ServiceIdentity& id, const ServiceFlags& flags);

}  // namespace gpuaas::service
