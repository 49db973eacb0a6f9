// The one blocking unary call every typed client (auth_client.h ...) makes: a fresh context from
// the CallContext, the call, and the status mapped to absl; and the same call started without
// waiting (pending_call.h). Private to libs/client.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "libs/client/access_tokens.h"
#include "libs/client/call_context.h"
#include "libs/client/cancellation.h"
#include "libs/client/internal/service_token.h"
#include "libs/client/pending_call.h"
#include "libs/rpc/status.h"

namespace gpuaas::client::internal {

template <class Stub, class Req, class Resp>
using UnaryMethod = grpc::Status (Stub::*)(grpc::ClientContext*, const Req&, Resp*);

// Calls `method` on `stub`, blocking until the answer or the deadline, with the service's token
// from `tokens` unless the call carries one (service_token.h). Errors: the server's code and
// message; UNAVAILABLE, DEADLINE_EXCEEDED or CANCELLED from gRPC itself; UNAVAILABLE when no
// service token could be had.
template <class Stub, class Req, class Resp>
absl::StatusOr<Resp> UnaryCall(Stub& stub, UnaryMethod<Stub, Req, Resp> method, const Req& req,
                               const CallContext& call, absl::Duration default_timeout,
                               AccessTokens* tokens = nullptr) {
  absl::StatusOr<CallContext> authorized = WithServiceToken(call, tokens);
  if (!authorized.ok()) return authorized.status();
  std::unique_ptr<grpc::ClientContext> ctx = authorized->NewClientContext(default_timeout);
  CancelScope scope(call.cancellation(), *ctx);
  Resp resp;
  grpc::Status status = (stub.*method)(ctx.get(), req, &resp);
  if (!status.ok()) {
    NoteAnswer(status, tokens);
    return rpc::FromGrpcStatus(status);
  }
  return resp;
}

// UnaryCall for a create idempotent by a key the request may leave empty (request_id,
// operation_id): when `keyed`, an UNAVAILABLE answer is sent again (on a channel over replicas
// the next attempt goes to the next replica), at most kRepeatAttempts times in all and within
// the first attempt's deadline; without the key it is sent once (repeatable_methods.h).
inline constexpr int kRepeatAttempts = 3;

template <class Stub, class Req, class Resp>
absl::StatusOr<Resp> RepeatableUnaryCall(bool keyed, Stub& stub,
                                         UnaryMethod<Stub, Req, Resp> method, const Req& req,
                                         const CallContext& call, absl::Duration default_timeout) {
  const absl::Time deadline = call.Deadline(absl::Now(), default_timeout);
  absl::StatusOr<Resp> answer = UnaryCall(stub, method, req, call, default_timeout);
  for (int attempt = 1; keyed && attempt < kRepeatAttempts &&
                        absl::IsUnavailable(answer.status()) && absl::Now() < deadline;
       ++attempt) {
    CallContext again = call;
    again.set_timeout(deadline - absl::Now());
    answer = UnaryCall(stub, method, req, again, default_timeout);
  }
  return answer;
}

// The callback API of a stub (StubInterface::async_interface) and a method's form there.
template <class Stub>
using CallbackApi = std::remove_pointer_t<decltype(std::declval<Stub&>().async())>;
template <class Stub, class Req, class Resp>
using CallbackUnaryMethod = void (CallbackApi<Stub>::*)(grpc::ClientContext*, const Req*, Resp*,
                                                        std::function<void(grpc::Status)>);

// Starts `method` on `stub` and returns at once; the PendingCall waits for the answer.
template <class Stub, class Req, class Resp>
PendingCall<Resp> StartUnaryCall(Stub& stub, CallbackUnaryMethod<Stub, Req, Resp> method,
                                 const Req& req, const CallContext& call,
                                 absl::Duration default_timeout) {
  auto state = std::make_unique<CallStateWith<Req, Resp>>(req);
  state->ctx = call.NewClientContext(default_timeout);
  CallStateWith<Req, Resp>* s = state.get();  // lives until `done`: PendingCall waits for it
  (stub.async()->*method)(s->ctx.get(), &s->req, &s->resp, [s](grpc::Status status) {
    s->status = std::move(status);
    s->done.Notify();
  });
  return PendingCall<Resp>(std::move(state));
}

}  // namespace gpuaas::client::internal
