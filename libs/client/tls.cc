#include "libs/client/tls.h"

#include "libs/common/files.h"
#include "libs/common/status_macros.h"

namespace gpuaas::client {

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsOptions& tls) {
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError("tls: client cert_file and key_file go together");
  }
  if (tls.ca_file.empty()) {
    if (!tls.cert_file.empty() || !tls.server_name_override.empty()) {
      return absl::InvalidArgumentError(
          "tls: a client certificate or server name needs ca_file (TLS)");
    }
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions options;
  GPUAAS_ASSIGN_OR_RETURN(options.pem_root_certs, ReadNonEmptyFile(tls.ca_file));
  if (!tls.cert_file.empty()) {
    GPUAAS_ASSIGN_OR_RETURN(options.pem_cert_chain, ReadNonEmptyFile(tls.cert_file));
    GPUAAS_ASSIGN_OR_RETURN(options.pem_private_key, ReadNonEmptyFile(tls.key_file));
  }
  return grpc::SslCredentials(options);
}

}  // namespace gpuaas::client
