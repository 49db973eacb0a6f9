#include "libs/client/channel.h"

#include <grpcpp/create_channel.h>

#include "libs/common/status_macros.h"

namespace gpuaas::client {

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const std::string& address,
                                                           const TlsOptions& tls,
                                                           grpc::ChannelArguments args) {
  GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                          MakeChannelCredentials(tls));
  if (!tls.server_name_override.empty()) {
    args.SetSslTargetNameOverride(tls.server_name_override);
  }
  return grpc::CreateCustomChannel(address, credentials, args);
}

}  // namespace gpuaas::client
