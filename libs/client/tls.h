// Client TLS settings and the channel credentials built from them: plaintext, TLS verifying the
// server against a CA, or mutual TLS presenting a client certificate too. Files are PEM, read
// when the credentials are built, so a bad path fails at startup rather than on the first call.
#pragma once

#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace gpuaas::client {

struct TlsOptions {
  // The roots that sign the server's certificate; empty = plaintext (and then every other
  // field must be empty too).
  std::string ca_file;
  // The certificate and key presented for mutual TLS; both or neither.
  std::string cert_file;
  std::string key_file;
  // The name the server's certificate must carry when it differs from the host dialled
  // (e.g. "auth" while dialling 10.0.0.5:17051). Empty = the dialled host.
  std::string server_name_override;
};

// Insecure credentials when ca_file is empty, otherwise TLS with the files above.
// Errors: INVALID_ARGUMENT for cert_file without key_file (or the reverse), or a client
// certificate or server name without ca_file (never a silent fall back to plaintext);
// FAILED_PRECONDITION for an unreadable or empty file. Blocks on file I/O.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsOptions& tls);

}  // namespace gpuaas::client
