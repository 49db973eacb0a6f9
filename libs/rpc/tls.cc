#include "libs/rpc/tls.h"

#include "libs/common/files.h"

namespace gpuaas::rpc {

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& tls) {
  if (tls.cert_file.empty()) {
    if (tls.require_client_cert || !tls.key_file.empty()) {
      return absl::InvalidArgumentError("tls: key or client verification set without a cert");
    }
    return grpc::InsecureServerCredentials();
  }
  if (tls.key_file.empty()) {
    return absl::InvalidArgumentError("tls: cert_file set without key_file");
  }
  if (tls.require_client_cert && tls.ca_file.empty()) {
    return absl::InvalidArgumentError("tls: require_client_cert needs ca_file");
  }
  absl::StatusOr<std::string> cert = ReadNonEmptyFile(tls.cert_file);
  if (!cert.ok()) {
    return cert.status();
  }
  absl::StatusOr<std::string> key = ReadNonEmptyFile(tls.key_file);
  if (!key.ok()) {
    return key.status();
  }
  grpc::SslServerCredentialsOptions options(
      tls.require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                              : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  if (!tls.ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadNonEmptyFile(tls.ca_file);
    if (!ca.ok()) {
      return ca.status();
    }
    options.pem_root_certs = *std::move(ca);
  }
  options.pem_key_cert_pairs.push_back({*std::move(key), *std::move(cert)});
  return grpc::SslServerCredentials(options);
}

}  // namespace gpuaas::rpc
