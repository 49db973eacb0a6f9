// gpuaas-health: asks a server's grpc.health.v1.Health for a service's status, the way a
// probe or the dev stack script does. Exit 0 when SERVING, 1 otherwise, 2 on bad usage.
//
//   gpuaas-health 127.0.0.1:50051 [service] [--ca ca.crt --cert client.crt --key client.key]
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>

#include "grpc/health/v1/health.grpc.pb.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Checks grpc.health.v1 of a gpuaas server");
  std::string address;
  std::string service;
  std::string ca, cert, key;
  int timeout_ms = 2000;
  app.add_option("address", address, "host:port")->required();
  app.add_option("service", service, "service name; empty = the whole server");
  app.add_option("--ca", ca, "CA certificate: use TLS")->check(CLI::ExistingFile);
  app.add_option("--cert", cert, "client certificate for mutual TLS")->check(CLI::ExistingFile);
  app.add_option("--key", key, "client key for mutual TLS")->check(CLI::ExistingFile);
  app.add_option("--timeout-ms", timeout_ms)->check(CLI::Range(1, 600000));
  CLI11_PARSE(app, argc, argv);

  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!ca.empty()) {
    grpc::SslCredentialsOptions opts;
    opts.pem_root_certs = ReadFile(ca);
    if (!cert.empty()) opts.pem_cert_chain = ReadFile(cert);
    if (!key.empty()) opts.pem_private_key = ReadFile(key);
    creds = grpc::SslCredentials(opts);
  }
  auto stub = grpc::health::v1::Health::NewStub(grpc::CreateChannel(address, creds));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(service);
  grpc::health::v1::HealthCheckResponse resp;
  grpc::Status status = stub->Check(&ctx, req, &resp);
  if (!status.ok()) {
    std::cout << "UNREACHABLE (" << status.error_message() << ")\n";
    return 1;
  }
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(resp.status()) << "\n";
  return resp.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}
