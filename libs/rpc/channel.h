// Client side: channels to other services (plaintext, TLS or mutual TLS) and the
// ClientContext every client wrapper call starts from, so no call goes out without a deadline.
//
//   GPUAAS_ASSIGN_OR_RETURN(auto channel, rpc::OpenChannel("localhost:50051", tls));
//   auto stub = auth::v1::AuthService::NewStub(channel);
//   auto ctx = rpc::NewClientContext(absl::Seconds(2), token);
//   grpc::Status s = stub->GetTenant(ctx.get(), req, &resp);
//   return rpc::FromGrpcStatus(s);
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/rpc/tls.h"

namespace gpuaas::rpc {

// A channel to `address` ("host:port"), TLS when `tls.ca_file` is set (presenting
// cert/key when set). Errors as MakeChannelCredentials. Does not connect (never blocks).
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const std::string& address,
                                                           const TlsOptions& tls);

// OpenChannel for callers that validated `tls` at startup: on a configuration error it logs
// and returns a channel whose calls all fail with UNAVAILABLE, never a plaintext fallback.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address, const TlsOptions& tls);

// A context whose deadline is now + `timeout`, carrying "authorization: Bearer <token>" when
// `bearer_token` is not empty (a value already starting with "Bearer " is sent as is).
std::unique_ptr<grpc::ClientContext> NewClientContext(absl::Duration timeout,
                                                      std::string_view bearer_token = {});

}  // namespace gpuaas::rpc
