// gpuaas-health: asks a server's grpc.health.v1.Health for a service's status, the way a
// probe or the dev stack script does. Exit 0 when SERVING, 1 otherwise, 2 on bad usage.
//
//   gpuaas-health 127.0.0.1:17051 [service] [--ca ca.crt --cert client.crt --key client.key]
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "absl/time/time.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "libs/client/call_context.h"
#include "libs/client/channel.h"

namespace {

constexpr int kExitNotServing = 1;
constexpr int kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Checks grpc.health.v1 of a gpuaas server");
  std::string address;
  std::string service;
  gpuaas::client::TlsOptions tls;
  int timeout_ms = 2000;
  app.add_option("address", address, "host:port")->required();
  app.add_option("service", service, "service name; empty = the whole server");
  app.add_option("--ca", tls.ca_file, "CA certificate: use TLS")->check(CLI::ExistingFile);
  app.add_option("--cert", tls.cert_file, "client certificate for mutual TLS")
      ->check(CLI::ExistingFile);
  app.add_option("--key", tls.key_file, "client key for mutual TLS")->check(CLI::ExistingFile);
  app.add_option("--timeout-ms", timeout_ms)->check(CLI::Range(1, 600000));
  CLI11_PARSE(app, argc, argv);

  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      gpuaas::client::OpenChannel(address, tls);
  if (!channel.ok()) {
    std::cerr << "error: " << channel.status().message() << "\n";
    return kExitUsage;
  }
  auto stub = grpc::health::v1::Health::NewStub(*channel);
  std::unique_ptr<grpc::ClientContext> ctx =
      gpuaas::client::CallContext().set_timeout(absl::Milliseconds(timeout_ms)).NewClientContext();
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(service);
  grpc::health::v1::HealthCheckResponse resp;
  grpc::Status status = stub->Check(ctx.get(), req, &resp);
  if (!status.ok()) {
    std::cout << "UNREACHABLE (" << status.error_message() << ")\n";
    return kExitNotServing;
  }
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(resp.status()) << "\n";
  return resp.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : kExitNotServing;
}
