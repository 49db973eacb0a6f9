// Server bootstrap shared by every binary: listening address with optional TLS / mutual TLS,
// grpc.health.v1 and reflection, the per-call log line and Prometheus metrics (an interceptor
// sees every call, health and reflection included), a worker pool for blocking handlers,
// and graceful shutdown on SIGTERM/SIGINT.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "libs/authz/verifier.h"
#include "libs/rpc/handler.h"

namespace gpuaas::rpc {

struct TlsOptions {
  std::string cert_file;  // empty = plaintext
  std::string key_file;
  std::string ca_file;    // with require_client_cert: clients must present a cert signed by it
  bool require_client_cert = false;
};

struct ServerOptions {
  std::string name;                 // "auth": logger and metrics label
  std::string listen_address = "0.0.0.0:50051";  // port 0 picks a free port
  std::string metrics_address = "0.0.0.0:9101";  // empty = no metrics endpoint; port 0 = free
  TlsOptions tls;
  int worker_threads = 8;           // handler pool (blocking database work runs here)
};

class Server final {
 public:
  // `authenticator` checks bearer tokens for every method not marked public in Handler.
  Server(ServerOptions options, std::unique_ptr<authz::Authenticator> authenticator);
  ~Server();

  // The handler context services use to run calls (auth + pool + error mapping).
  Handler& handler();

  // Adds a service (not owned; must outlive the server). Call before Start.
  void AddService(grpc::Service* service);

  // Binds, starts serving, marks every service SERVING on grpc.health.v1, starts metrics.
  // Errors: FAILED_PRECONDITION for unreadable TLS files, UNAVAILABLE when the port is taken.
  absl::Status Start();

  int port() const;          // the bound gRPC port (after Start)
  int metrics_port() const;  // the bound metrics port, 0 when disabled

  // Blocks until SIGTERM/SIGINT or Shutdown(), then drains in-flight calls (up to 10 s).
  void Wait();
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A client channel to `address`, TLS when `tls.ca_file` is set (presenting cert/key when set).
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address, const TlsOptions& tls);

}  // namespace gpuaas::rpc
