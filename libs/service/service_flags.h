// What every gpuaas service binary configures the same way: the process's flags
// (process_flags.h: listen, metrics, TLS, threads, log level) and its database, each a flag with
// an environment fallback GPUAAS_<NAME>_<FLAG> (`--db-dsn` <- GPUAAS_AUTH_DB_DSN), and defaults
// that match the dev stack (tools/gpuaas up), so every service runs with no configuration. A
// service's main.cc adds its own flags next to these, then calls OpenDatabase and
// ServerOptionsFor.
#pragma once

#include <span>

#include "absl/status/statusor.h"
#include "libs/db/db.h"
#include "libs/rpc/server.h"
#include "libs/service/lifecycle.h"
#include "libs/service/process_flags.h"

namespace CLI {
class App;
}

namespace gpuaas::service {

struct ServiceFlags : ProcessFlags {
  std::string db_dsn;
  int db_pool_size = 8;
  int db_wait_seconds = 30;
};

// AddProcessFlags for a gRPC server, and --db-dsn, --db-pool-size, --db-wait-seconds.
void AddServiceFlags(CLI::App& app, const ServiceIdentity& id, ServiceFlags& flags);

// ValidateProcessFlags, and a --db-dsn that carries no password: a command line is world
// readable (`ps`), so the password lives in a 0600 file the DSN names (passfile=).
// INVALID_ARGUMENT naming the flag, never quoting the DSN.
absl::Status ValidateServiceFlags(const ServiceFlags& flags);

// Opens the pool and applies `migrations` to the service's schema, waiting up to
// --db-wait-seconds for PostgreSQL to come up (compose, systemd start both at once). Blocks.
// Errors: as db::Pool::Create and db::Migrate; UNAVAILABLE when the wait ran out.
absl::StatusOr<std::unique_ptr<db::Pool>> OpenDatabase(const ServiceIdentity& id,
                                                       const ServiceFlags& flags,
                                                       std::span<const db::Migration> migrations);

}  // namespace gpuaas::service
