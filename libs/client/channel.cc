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
  // A server gone without closing (this node cut off the network) would leave a call or
  // stream waiting for hours: pinged every 10 s while calls are open, it is given up within
  // 20 s and the channel reconnects. Our servers accept pings every 5 s (libs/rpc/server.cc).
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
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
