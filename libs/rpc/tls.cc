#include "libs/rpc/tls.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace gpuaas::rpc {

absl::StatusOr<std::string> ReadPemFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read ", path));
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (content.str().empty()) {
    return absl::FailedPreconditionError(absl::StrCat("empty file ", path));
  }
  return content.str();
}

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
  absl::StatusOr<std::string> cert = ReadPemFile(tls.cert_file);
  if (!cert.ok()) {
    return cert.status();
  }
  absl::StatusOr<std::string> key = ReadPemFile(tls.key_file);
  if (!key.ok()) {
    return key.status();
  }
  grpc::SslServerCredentialsOptions options(
      tls.require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                              : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  if (!tls.ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPemFile(tls.ca_file);
    if (!ca.ok()) {
      return ca.status();
    }
    options.pem_root_certs = *std::move(ca);
  }
  options.pem_key_cert_pairs.push_back({*std::move(key), *std::move(cert)});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsOptions& tls) {
  if (tls.ca_file.empty()) {
    return grpc::InsecureChannelCredentials();
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError("tls: client cert_file and key_file go together");
  }
  grpc::SslCredentialsOptions options;
  absl::StatusOr<std::string> ca = ReadPemFile(tls.ca_file);
  if (!ca.ok()) {
    return ca.status();
  }
  options.pem_root_certs = *std::move(ca);
  if (!tls.cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadPemFile(tls.cert_file);
    if (!cert.ok()) {
      return cert.status();
    }
    absl::StatusOr<std::string> key = ReadPemFile(tls.key_file);
    if (!key.ok()) {
      return key.status();
    }
    options.pem_cert_chain = *std::move(cert);
    options.pem_private_key = *std::move(key);
  }
  return grpc::SslCredentials(options);
}

}  // namespace gpuaas::rpc
