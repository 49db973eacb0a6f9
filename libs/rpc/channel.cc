#include "libs/rpc/channel.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "absl/time/clock.h"
#include "libs/common/logging.h"

namespace gpuaas::rpc {

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const std::string& address,
                                                           const TlsOptions& tls) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> creds = MakeChannelCredentials(tls);
  if (!creds.ok()) {
    return creds.status();
  }
  grpc::ChannelArguments args;
  if (!tls.server_name_override.empty() && !tls.ca_file.empty()) {
    args.SetSslTargetNameOverride(tls.server_name_override);
  }
  return grpc::CreateCustomChannel(address, *creds, args);
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address, const TlsOptions& tls) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(address, tls);
  if (channel.ok()) {
    return *std::move(channel);
  }
  Logger("rpc")->error("channel to {}: {}", address, channel.status().ToString());
  // An unresolvable unix socket: every call fails UNAVAILABLE, nothing is sent in clear.
  return grpc::CreateChannel("unix:/nonexistent/gpuaas-misconfigured-channel",
                             grpc::InsecureChannelCredentials());
}

std::unique_ptr<grpc::ClientContext> NewClientContext(absl::Duration timeout,
                                                      std::string_view bearer_token) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  if (!bearer_token.empty()) {
    constexpr std::string_view kBearer = "Bearer ";
    ctx->AddMetadata("authorization", bearer_token.starts_with(kBearer)
                                          ? std::string(bearer_token)
                                          : std::string(kBearer) + std::string(bearer_token));
  }
  return ctx;
}

}  // namespace gpuaas::rpc
