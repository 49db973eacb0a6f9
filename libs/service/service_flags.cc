#include "libs/service/service_flags.h"

#include "absl/time/clock.h"
#include "libs/common/logging.h"
#include "libs/db/dsn.h"
#include "libs/service/env_options.h"

namespace gpuaas::service {

void AddServiceFlags(CLI::App& app, const ServiceIdentity& id, ServiceFlags& f) {
  AddProcessFlags(app, id, ServerKind::kGrpc, f);
  f.db_dsn = "postgresql://gpuaas_" + std::string(id.name) + "@127.0.0.1:15432/gpuaas";
  EnvOptions options(app, id.name);
  options.Add("--db-dsn", f.db_dsn, "PostgreSQL connection string");
  options.Add("--db-pool-size", f.db_pool_size, "database connections")->check(CLI::Range(1, 256));
  options.Add("--db-wait-seconds", f.db_wait_seconds, "how long to wait for PostgreSQL at start")
      ->check(CLI::Range(0, 3600));
}

absl::Status ValidateServiceFlags(const ServiceFlags& f) {
  if (absl::Status s = ValidateProcessFlags(f); !s.ok()) return s;
  if (db::DsnHasParam(f.db_dsn, "password")) {
    return absl::InvalidArgumentError(
        "--db-dsn: carries a password, which any local user reads off the command line; put it "
        "in a 0600 password file and name that with passfile=");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<db::Pool>> OpenDatabase(const ServiceIdentity& id,
                                                       const ServiceFlags& f,
                                                       std::span<const db::Migration> migrations) {
  absl::StatusOr<std::unique_ptr<db::Pool>> pool =
      db::Pool::Create({.dsn = f.db_dsn, .size = f.db_pool_size});
  if (!pool.ok()) {
    return pool.status();
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(f.db_wait_seconds);
  while (true) {
    absl::Status s = db::Migrate(**pool, id.name, migrations);
    if (s.ok()) {
      return pool;
    }
    if (s.code() != absl::StatusCode::kUnavailable || absl::Now() > deadline) {
      return s;
    }
    Logger(std::string(id.name))->warn("waiting for PostgreSQL: {}", s.ToString());
    absl::SleepFor(absl::Seconds(1));
  }
}

}  // namespace gpuaas::service
