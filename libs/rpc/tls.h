// Server TLS settings and the gRPC server credentials built from them. Files are PEM; they are
// read when credentials are built, so a bad path fails at startup. The client side (channel
// credentials) lives in libs/client/tls.h.
#pragma once

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace gpuaas::rpc {

struct TlsOptions {
  // The server's certificate and key; empty cert_file = plaintext.
  std::string cert_file;
  std::string key_file;
  // With require_client_cert, clients must present a certificate signed by this CA.
  std::string ca_file;
  bool require_client_cert = false;
};

// Plaintext when cert_file is empty. FAILED_PRECONDITION for unreadable or empty files,
// INVALID_ARGUMENT for an incomplete configuration (cert without key, require_client_cert
// without ca_file). Blocks on file I/O.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& tls);

}  // namespace gpuaas::rpc
