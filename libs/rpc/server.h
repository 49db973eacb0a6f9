// Server bootstrap shared by every binary: listening address with optional TLS / mutual TLS,
// grpc.health.v1 and reflection, the per-call log line and Prometheus metrics (an interceptor
// sees every call, health and reflection included), a worker pool for blocking handlers and
// streams (libs/rpc/stream.h), and graceful shutdown on SIGTERM/SIGINT.
//
//   int main(int argc, char** argv) {
//     rpc::ServerOptions options{.name = "auth", .listen_address = "0.0.0.0:17051"};
//     rpc::Server server(options, authz::NewJwksAuthenticator(std::move(jwks), clock));
//     AuthServiceImpl auth(server.handler(), domain);   // a CallbackService using Handler
//     server.AddService(&auth);
//     if (absl::Status s = server.Start(); !s.ok()) { log; return 1; }
//     server.Wait();  // returns after SIGTERM/SIGINT, once in-flight calls drained
//   }
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libs/authz/verifier.h"
#include "libs/rpc/handler.h"
#include "libs/rpc/tls.h"

namespace prometheus {
class Registry;
}

namespace gpuaas::rpc {

struct ServerOptions {
  std::string name;                              // "auth": logger and log-line prefix
  std::string listen_address = "0.0.0.0:17051";  // port 0 picks a free port
  std::string metrics_address = "0.0.0.0:9101";  // IPv4; empty = no metrics endpoint; port 0 = free
  TlsOptions tls;
  int worker_threads = 8;  // handler pool (blocking database work runs here)
  // Calls waiting for a worker beyond this many are refused UNAVAILABLE at once: under
  // overload, a fast "busy" beats an answer after the client's deadline.
  int max_queued_calls = 1000;
  // The CPU lane, for calls that burn CPU rather than wait (password hashing): one thread per
  // core by default and a short queue, so a login flood neither takes the handler pool from
  // cheap calls nor queues logins past their deadlines.
  int cpu_threads = 0;  // 0 = one per core
  int cpu_max_queued_calls = 32;
  // Health/Watch and reflection streams need no token, so anyone who reaches the port opens
  // them, over as many connections as it likes: each held ~18 KB, and a reflection stream one
  // thread, with nothing counting them (libs/rpc/README.md "Unauthenticated streams"). Past
  // either cap a new one is refused RESOURCE_EXHAUSTED naming it. A client is a peer address.
  int max_public_streams_per_client = 128;
  int max_public_streams = 2048;
  // gRPC's synchronous pool (pollers and handlers; only reflection is synchronous, a thread
  // per open stream): past it reflection answers RESOURCE_EXHAUSTED "Server Threadpool
  // Exhausted", so a crowd of addresses cannot spawn threads without end either.
  int max_sync_threads = 64;
};

class Server final {
 public:
  // `authenticator` checks bearer tokens for every method not marked public in Handler.
  // May be null for a server with public methods only: then every Run() call is refused.
  Server(ServerOptions options, std::unique_ptr<authz::Authenticator> authenticator);
  // Shuts down (as Shutdown) when still running.
  ~Server();

  // The handler context services use to run calls (auth + pool + error mapping).
  Handler& handler();
  // The same on the CPU lane (see ServerOptions::cpu_threads).
  Handler& cpu_handler();

  // The registry the metrics endpoint serves, for a process's own series beside the RPC ones
  // (the storage service's S3 data plane).
  prometheus::Registry& metrics_registry();

  // Adds a service (not owned; must outlive the server). Call before Start.
  void AddService(grpc::Service* service);

  // Binds, starts serving, marks every service SERVING on grpc.health.v1, starts metrics,
  // and installs the SIGTERM/SIGINT handlers Wait() listens to.
  // Errors: FAILED_PRECONDITION for unreadable TLS files or a Start after Start or Shutdown,
  // INVALID_ARGUMENT
  // for incomplete TLS options, a certificate file holding no certificate or a bad metrics
  // address, UNAVAILABLE when a port is taken. With TLS, /metrics also shows when the serving
  // certificate expires (cert_expiry.h).
  // Does not block beyond binding.
  absl::Status Start();

  int port() const;          // the bound gRPC port (after Start)
  int metrics_port() const;  // the bound metrics port, 0 when disabled

  // Blocks until SIGTERM/SIGINT or Shutdown(), then drains in-flight calls (up to 10 s).
  // A signal that arrived after Start but before Wait is not lost.
  void Wait();
  // Marks the services NOT_SERVING (and, when a client watches that, goes on serving for
  // 500 ms while the news reaches it), ends every open stream (Handler::RunBidi) UNAVAILABLE
  // "server shutting down" (a stream busy with a message once that message is done), stops
  // accepting calls, waits for in-flight calls (after 10 s they are cancelled), stops the
  // metrics endpoint and wakes Wait(). Blocks until done; idempotent and thread-safe. Never
  // call it from a handler: it waits for that handler.
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuaas::rpc
