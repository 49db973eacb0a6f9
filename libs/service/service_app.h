// ServiceApp: the life of a service around its gRPC server, the same for every service. Start
// (tests: port 0, then port()), Run (main.cc: until SIGTERM/SIGINT), Stop. A service's app
// (services/<svc>/app.h) builds its dependencies and server_ in its Create, and starts its own
// background work (watchers, the reconciler, a data plane) in StartBackground, before the server
// takes calls, and ends it in StopBackground, after the server has drained.
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "libs/rpc/server.h"
#include "libs/service/service_flags.h"

namespace gpuaas::service {

class ServiceApp {
 public:
  ServiceApp(const ServiceApp&) = delete;
  ServiceApp& operator=(const ServiceApp&) = delete;
  virtual ~ServiceApp() = default;

  // Starts the background work, then serving (port() is bound afterwards). Errors:
  // StartBackground's; as rpc::Server::Start.
  absl::Status Start();
  // Starts the background work, serves until SIGTERM/SIGINT, then stops. Returns the process's
  // exit code: ServeUntilStopped's, or 1 when the background work could not start. Blocks.
  int Run();
  // Stops serving (drains calls in flight), then the background work. Idempotent.
  void Stop();

  int port() const { return server_->port(); }

 protected:
  explicit ServiceApp(const ServiceIdentity& id) : id_(id) {}
  // Stop(), then the server goes, while the services registered on it still live (gRPC's
  // rule). Every derived app's destructor calls it first: by the time this class's destructor
  // runs, the derived app's members are gone.
  void Close();

  std::unique_ptr<rpc::Server> server_;

 private:
  virtual absl::Status StartBackground() { return absl::OkStatus(); }
  virtual void StopBackground() {}

  ServiceIdentity id_;
};

}  // namespace gpuaas::service
