// What every gpuaas process configures the same way, database or not (the services, the node
// agent, the access proxy): where it listens, where its metrics are, its threads, log level and
// TLS. Each is a flag with an environment fallback derived from the process's name and the
// flag's (`--stock-addr` of agent <- GPUAAS_AGENT_STOCK_ADDR, env_options.h), and defaults that
// match the dev stack (tools/gpuaas up), so every process runs with no configuration. The
// services add the database flags on top (service_flags.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/client/tls.h"
#include "libs/rpc/server.h"

namespace grpc {
class Channel;
}

namespace prometheus {
class Collectable;
}

namespace CLI {
class App;
}

namespace gpuaas::rpc {
class MetricsEndpoint;
}

namespace gpuaas::service {

// The parts that differ per process: its name (logger, environment prefix; a service's schema
// and role) and its default ports (design: auth 17051 / 9101, stock 17052 / 9102, ...).
struct ServiceIdentity {
  std::string_view name;  // "auth"
  int grpc_port = 0;      // --listen's default port (the proxy's serves HTTP)
  int metrics_port = 0;   // --metrics-listen's default port
};

// What the process serves, which decides its TLS and thread flags.
enum class ServerKind {
  // gRPC (the services, the agent): --workers handler threads; --tls-ca also verifies client
  // certificates (--tls-require-client-cert), and the served certificate doubles as the client
  // certificate towards peers.
  kGrpc,
  // HTTP(S) (the access proxy): --io-threads; the served certificate is the public one
  // browsers see, so peers get their own --tls-client-cert/--tls-client-key.
  kHttp,
};

struct ProcessFlags {
  std::string listen;
  std::string metrics_listen;
  int workers = 8;  // set a process's own default before AddProcessFlags
  // kGrpc only: Health/Watch and reflection streams one client address may hold
  // (rpc::ServerOptions::max_public_streams_per_client).
  int max_public_streams_per_client = rpc::ServerOptions{}.max_public_streams_per_client;
  std::string log_level = "info";
  rpc::TlsOptions tls;          // served
  std::string tls_client_cert;  // kHttp only
  std::string tls_client_key;   // kHttp only
  ServerKind kind = ServerKind::kGrpc;
};

// The other gpuaas services a process calls and the API key it calls them with, defaulting to
// where the dev stack runs them; a process adds the flags of those it calls (EnvOptions).
struct PeerFlags {
  std::string auth_addr = "127.0.0.1:17051";      // --auth-addr
  std::string stock_addr = "127.0.0.1:17052";     // --stock-addr
  std::string storage_addr = "127.0.0.1:17053";   // --storage-addr
  std::string instance_addr = "127.0.0.1:17054";  // --instance-addr
  std::string api_key_file;                       // --api-key-file
};

// The API key in --api-key-file (its first line). Error: INVALID_ARGUMENT naming
// --api-key-file when it is unset or cannot be read.
absl::StatusOr<std::string> ReadApiKey(const PeerFlags& peers);

// Adds --listen (alias --listen-address), --metrics-listen (alias --metrics-address),
// --log-level, --tls-cert, --tls-key, --tls-ca, and by `kind` either --workers,
// --max-public-streams-per-client and --tls-require-client-cert or --io-threads, --tls-client-cert
// and --tls-client-key to `app`, with their environment fallbacks and range checks; fills `flags`
// with the defaults.
void AddProcessFlags(CLI::App& app, const ServiceIdentity& id, ServerKind kind,
                     ProcessFlags& flags);

// The environment variable behind a flag: ("auth", "DB_DSN") -> "GPUAAS_AUTH_DB_DSN".
std::string EnvName(std::string_view process, std::string_view flag);

// The environment variable behind an option named `names` as CLI11 spells them (the first long
// name counts): ("agent", "--listen,--listen-address") -> "GPUAAS_AGENT_LISTEN".
std::string FlagEnvName(std::string_view process, std::string_view names);

// A duration flag ("30s", "200ms", "1m"). `allow_zero` lets "0" mean "unset". Error:
// INVALID_ARGUMENT naming `flag` for text that is no duration, negative, infinite, or zero when
// not allowed.
absl::StatusOr<absl::Duration> ParseDurationFlag(std::string_view flag, std::string_view text,
                                                 bool allow_zero = false);

// Checks the combinations a range check cannot (a certificate without its key). Error:
// INVALID_ARGUMENT naming the flags.
absl::Status ValidateProcessFlags(const ProcessFlags& flags);

// The TLS this process uses towards its peers (other gpuaas services): TLS when --tls-ca is
// set; its client certificate is --tls-client-cert, or for a gRPC server with --tls-ca its own.
client::TlsOptions PeerTlsOptions(const ProcessFlags& flags);

// A channel to another gpuaas service with PeerTlsOptions. Errors as client::OpenChannel.
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenPeerChannel(const ProcessFlags& flags,
                                                               const std::string& address);

// The gRPC server options the flags describe.
rpc::ServerOptions ServerOptionsFor(const ServiceIdentity& id, const ProcessFlags& flags);

// A process's own /metrics endpoint on --metrics-listen serving `collectables` and the
// process's CPU and memory; null when --metrics-listen is empty. For a process whose metrics
// are not an rpc::Server's. Errors: as rpc::MetricsEndpoint::Start. Blocks only while binding.
absl::StatusOr<std::unique_ptr<rpc::MetricsEndpoint>> StartMetrics(
    const ProcessFlags& flags, std::vector<std::shared_ptr<prometheus::Collectable>> collectables);

}  // namespace gpuaas::service
