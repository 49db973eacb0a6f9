// A JwksSource that asks the auth service (gpuaas.auth.v1.AuthService/GetJwks) through
// client::AuthClient. Kept in its own target, gpuaas::authz_grpc, so code that only verifies
// tokens (and the auth service itself) need not link the auth client.
#pragma once

#include <grpcpp/channel.h>

#include <memory>

#include "absl/time/time.h"
#include "libs/authz/verifier.h"

namespace gpuaas::authz {

// Each FetchJwks is one GetJwks call with a `timeout` deadline; it blocks for at most that
// long. Errors keep their gRPC code (UNAVAILABLE when the auth service is unreachable,
// DEADLINE_EXCEEDED on timeout). Thread-safe, like the channel it uses.
std::unique_ptr<JwksSource> NewGrpcJwksSource(std::shared_ptr<grpc::Channel> auth_channel,
                                              absl::Duration timeout = absl::Seconds(2));

}  // namespace gpuaas::authz
