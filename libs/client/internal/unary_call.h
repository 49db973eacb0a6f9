// The one blocking unary call every typed client (auth_client.h ...) makes: a fresh context from
// the CallContext, the call, and the status mapped to absl. Private to libs/client.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/client/call_context.h"
#include "libs/rpc/status.h"

namespace gpuaas::client::internal {

template <class Stub, class Req, class Resp>
using UnaryMethod = grpc::Status (Stub::*)(grpc::ClientContext*, const Req&, Resp*);

// Calls `method` on `stub`, blocking until the answer or the deadline. Errors: the server's
// code and message; UNAVAILABLE, DEADLINE_EXCEEDED or CANCELLED from gRPC itself.
template <class Stub, class Req, class Resp>
absl::StatusOr<Resp> UnaryCall(Stub& stub, UnaryMethod<Stub, Req, Resp> method, const Req& req,
                               const CallContext& call, absl::Duration default_timeout) {
  std::unique_ptr<grpc::ClientContext> ctx = call.NewClientContext(default_timeout);
  Resp resp;
  grpc::Status status = (stub.*method)(ctx.get(), req, &resp);
  if (!status.ok()) {
    return rpc::FromGrpcStatus(status);
  }
  return resp;
}

}  // namespace gpuaas::client::internal
