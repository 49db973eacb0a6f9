#include "tools/gpuaasctl/channel.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpuaas::ctl {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path));
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const TlsFiles& tls,
                                                           const grpc::ChannelArguments& args) {
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError("--cert and --key go together");
  }
  if (tls.ca_file.empty()) {
    if (!tls.cert_file.empty()) {
      return absl::InvalidArgumentError("--cert needs --ca (TLS)");
    }
    return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  }
  grpc::SslCredentialsOptions ssl;
  auto ca = ReadFile(tls.ca_file);
  if (!ca.ok()) {
    return ca.status();
  }
  ssl.pem_root_certs = *std::move(ca);
  if (!tls.cert_file.empty()) {
    auto cert = ReadFile(tls.cert_file);
    if (!cert.ok()) {
      return cert.status();
    }
    auto key = ReadFile(tls.key_file);
    if (!key.ok()) {
      return key.status();
    }
    ssl.pem_cert_chain = *std::move(cert);
    ssl.pem_private_key = *std::move(key);
  }
  return grpc::CreateCustomChannel(address, grpc::SslCredentials(ssl), args);
}

}  // namespace gpuaas::ctl
