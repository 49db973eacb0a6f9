#include "libs/client/channel.h"

#include <grpcpp/create_channel.h>

#include "libs/client/internal/repeatable_methods.h"
#include "libs/client/internal/replica_target.h"
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
  if (!internal::IsReplicaList(address)) {
    return grpc::CreateCustomChannel(address, credentials, args);
  }
  const bool one_server_name = !tls.ca_file.empty() && tls.server_name_override.empty();
  GPUAAS_ASSIGN_OR_RETURN(internal::ReplicaTarget replicas,
                          internal::ResolveReplicaList(address, one_server_name));
  args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, replicas.authority);
  args.SetServiceConfigJSON(internal::ReplicaServiceConfig());
  return grpc::CreateCustomChannel(replicas.target, credentials, args);
}

}  // namespace gpuaas::client
