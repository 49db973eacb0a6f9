#include "libs/service/service_flags.h"

#include <CLI/CLI.hpp>
#include <cctype>

#include "absl/time/clock.h"
#include "libs/client/channel.h"
#include "libs/common/logging.h"

namespace gpuaas::service {

std::string EnvName(std::string_view service, std::string_view flag) {
  std::string name = "GPUAAS_";
  for (char c : service) {
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  name += '_';
  name += flag;
  return name;
}

void AddServiceFlags(CLI::App& app, const ServiceIdentity& id, ServiceFlags& f) {
  const std::string name(id.name);
  f.listen = "0.0.0.0:" + std::to_string(id.grpc_port);
  f.metrics_listen = "0.0.0.0:" + std::to_string(id.metrics_port);
  f.db_dsn = "postgresql://gpuaas_" + name + "@127.0.0.1:15432/gpuaas";
  auto env = [&](std::string_view flag) { return EnvName(id.name, flag); };
  app.add_option("--listen", f.listen, "gRPC listen address")->envname(env("LISTEN"));
  app.add_option("--metrics-listen", f.metrics_listen, "Prometheus /metrics address ('' = off)")
      ->envname(env("METRICS_LISTEN"));
  app.add_option("--db-dsn", f.db_dsn, "PostgreSQL connection string")->envname(env("DB_DSN"));
  app.add_option("--db-pool-size", f.db_pool_size, "database connections")
      ->envname(env("DB_POOL_SIZE"))
      ->check(CLI::Range(1, 256));
  app.add_option("--db-wait-seconds", f.db_wait_seconds, "how long to wait for PostgreSQL at start")
      ->envname(env("DB_WAIT_SECONDS"))
      ->check(CLI::Range(0, 3600));
  app.add_option("--workers", f.workers, "handler threads")
      ->envname(env("WORKERS"))
      ->check(CLI::Range(1, 512));
  app.add_option("--log-level", f.log_level)
      ->envname(env("LOG_LEVEL"))
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_option("--tls-cert", f.tls.cert_file, "server certificate (PEM)")
      ->envname(env("TLS_CERT"))
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", f.tls.key_file, "server private key (PEM)")
      ->envname(env("TLS_KEY"))
      ->check(CLI::ExistingFile);
  app.add_option("--tls-ca", f.tls.ca_file, "CA for client certificates")
      ->envname(env("TLS_CA"))
      ->check(CLI::ExistingFile);
  app.add_flag("--tls-require-client-cert", f.tls.require_client_cert)
      ->envname(env("TLS_REQUIRE_CLIENT_CERT"));
}

absl::Status ValidateServiceFlags(const ServiceFlags& f) {
  if (f.tls.cert_file.empty() != f.tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (f.tls.require_client_cert && f.tls.ca_file.empty()) {
    return absl::InvalidArgumentError("--tls-require-client-cert needs --tls-ca");
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

int ServeUntilStopped(const ServiceIdentity& id, rpc::Server& server) {
  auto log = Logger(std::string(id.name));
  if (absl::Status s = server.Start(); !s.ok()) {
    log->critical("server: {}", s.ToString());
    return 1;
  }
  log->info("gpuaas-{} serving on port {} (metrics port {})", std::string(id.name), server.port(),
            server.metrics_port());
  server.Wait();
  log->info("gpuaas-{} stopped", std::string(id.name));
  return 0;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenPeerChannel(const ServiceFlags& f,
                                                               const std::string& address) {
  const bool mutual = !f.tls.ca_file.empty();
  return client::OpenChannel(address, {.ca_file = f.tls.ca_file,
                                       .cert_file = mutual ? f.tls.cert_file : "",
                                       .key_file = mutual ? f.tls.key_file : ""});
}

rpc::ServerOptions ServerOptionsFor(const ServiceIdentity& id, const ServiceFlags& f) {
  return {.name = std::string(id.name),
          .listen_address = f.listen,
          .metrics_address = f.metrics_listen,
          .tls = f.tls,
          .worker_threads = f.workers};
}

}  // namespace gpuaas::service
