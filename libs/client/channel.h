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
//
// Replicas: an `address` listing several "host:port" entries, "localhost:17052,localhost:17152",
// opens one channel over all of them. Calls spread round robin; a replica whose connection
// fails is skipped until it connects again; a call that fails UNAVAILABLE is sent again to the
// next replica when repeating it is safe (internal/repeatable_methods.h: reads, and writes
// idempotent by a key). The host names are resolved once, here (blocking on the resolver);
// TLS checks the first entry's host name on every replica, so over TLS the entries must share
// one. Errors: INVALID_ARGUMENT naming an entry that is not host:port or does not resolve.
// One address opens exactly the channel it always did (no retry policy, pick_first).
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const std::string& address,
                                                           const TlsOptions& tls,
                                                           grpc::ChannelArguments args = {});

}  // namespace gpuaas::client
