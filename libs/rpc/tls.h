// TLS settings shared by servers and client channels, and the gRPC credentials built from them.
// Files are PEM; they are read when credentials are built, so a bad path fails at startup.
#pragma once

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace gpuaas::rpc {

struct TlsOptions {
  // Server: its certificate and key; empty cert_file = plaintext.
  // Client: the certificate and key it presents for mutual TLS (optional).
  std::string cert_file;
  std::string key_file;
  // Server: with require_client_cert, clients must present a cert signed by it.
  // Client: the roots that sign the server's certificate; empty = plaintext channel.
  std::string ca_file;
  bool require_client_cert = false;  // server only
  // Client only: the name the server's certificate must carry when it differs from the host
  // dialled (e.g. "auth" while dialling 10.0.0.5:50051). Empty = the dialled host.
  std::string server_name_override;
};

// Reads a whole file. FAILED_PRECONDITION naming the file when it cannot be read or is empty.
absl::StatusOr<std::string> ReadPemFile(const std::string& path);

// Plaintext when cert_file is empty. FAILED_PRECONDITION for unreadable files, INVALID_ARGUMENT
// for an incomplete configuration (cert without key, require_client_cert without ca_file).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& tls);

// Insecure when ca_file is empty; otherwise TLS verifying the server against ca_file and
// presenting cert_file/key_file when both are set. Same errors as MakeServerCredentials.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsOptions& tls);

}  // namespace gpuaas::rpc
