// A private PostgreSQL cluster owned by one test, for tests that stop and restart the server
// (the shared fixture cluster must stay up for everyone else). Started through
// tools/pg-cluster --fast on a free loopback port in a fresh temp dir; stopped and removed by
// the destructor. Starting takes about a second, so use it only where the server must move.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuaas::testing {

class ScopedPgCluster final {
 public:
  // initdb + start. Blocks. Errors: INTERNAL (no port, initdb or start failed; details on
  // stderr).
  static absl::StatusOr<std::unique_ptr<ScopedPgCluster>> Create();
  ~ScopedPgCluster();
  ScopedPgCluster(const ScopedPgCluster&) = delete;
  ScopedPgCluster& operator=(const ScopedPgCluster&) = delete;

  // Superuser DSN; stays valid across Stop/Start (same port).
  const std::string& dsn() const { return dsn_; }
  int port() const { return port_; }

  // Fast shutdown (open connections are terminated). Blocks until the server is gone.
  absl::Status Stop();
  // Starts it again on the same port. Blocks until it accepts connections.
  absl::Status Start();
  absl::Status Restart();

 private:
  ScopedPgCluster(std::string dir, int port) : dir_(std::move(dir)), port_(port) {}
  // Runs tools/pg-cluster with `args`; returns its stdout.
  absl::StatusOr<std::string> RunScript(const std::string& args);

  const std::string dir_;
  const int port_;
  std::string dsn_;
};

}  // namespace gpuaas::testing
