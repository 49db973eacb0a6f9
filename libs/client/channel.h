// Channels to other gpuaas services, plaintext, TLS or mutual TLS (see tls.h).
//
//   GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
//                           client::OpenChannel(endpoint.address, endpoint.tls));
//   client::AuthClient auth(channel);
//
// Open channels once at startup and share them: a channel is thread-safe and multiplexes every
// call over its connections.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "libs/client/tls.h"

namespace gpuaas::client {

// A channel to `address` ("host:port", or any gRPC target such as "unix:/path") with the
// credentials of `tls` and the extra channel arguments `args` (e.g. distinct values to keep
// gRPC from sharing one connection between channels). Errors as MakeChannelCredentials.
// Never connects, so it never blocks beyond reading the TLS files; the first call connects.
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const std::string& address,
                                                           const TlsOptions& tls,
                                                           grpc::ChannelArguments args = {});

}  // namespace gpuaas::client
