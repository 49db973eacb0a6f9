// One server-streaming call in flight, read by pulling. A typed client's Open<Rpc> method returns
// one (the instance service relays an agent's log stream through it); its <Rpc> method with a
// callback reads one to the end (ReadEach). The stream carries the deadline, the service token
// and the Cancellation of the CallContext it was opened with.
//
//   GPUAAS_ASSIGN_OR_RETURN(auto logs, agent_logs.OpenReadWorkloadLogs(address, req, call));
//   pb::LogChunk chunk;
//   while (logs->Read(chunk)) Relay(chunk);
//   return logs->Finish();
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/sync_stream.h>

#include <functional>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/client/access_tokens.h"
#include "libs/client/call_context.h"
#include "libs/client/cancellation.h"
#include "libs/client/internal/service_token.h"
#include "libs/rpc/status.h"

namespace gpuaas::client {

template <class T>
class ServerStream final {
 public:
  using Reader = grpc::ClientReaderInterface<T>;
  using Start = std::function<std::unique_ptr<Reader>(grpc::ClientContext*)>;

  // Starts the call (`start` on `ctx`). Built by typed clients only. `tokens` (may be null)
  // hears whether the peer refused the token; it and `cancellation` must outlive the stream.
  ServerStream(std::unique_ptr<grpc::ClientContext> ctx, Cancellation* cancellation,
               AccessTokens* tokens, const Start& start)
      : ctx_(std::move(ctx)),
        scope_(cancellation, *ctx_),
        tokens_(tokens),
        reader_(start(ctx_.get())) {}

  // The next message into `msg`; false when the stream ended (then call Finish). Blocks.
  bool Read(T& msg) { return reader_->Read(&msg); }

  // The stream's status once Read returned false or after Cancel: the peer's code and message,
  // or UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED from gRPC. A refused token is dropped. Blocks
  // until the call is over; call once.
  absl::Status Finish() {
    const grpc::Status status = reader_->Finish();
    internal::NoteAnswer(status, tokens_);
    return rpc::FromGrpcStatus(status);
  }

  // Ends the stream early: Read returns false soon. Thread-safe, never blocks.
  void Cancel() { ctx_->TryCancel(); }

  // Reads every message into `on_message` until it returns false (then cancels and returns OK)
  // or the stream ends (Finish's status).
  absl::Status ReadEach(const std::function<bool(const T&)>& on_message) {
    T msg;
    while (Read(msg)) {
      if (!on_message(msg)) {
        Cancel();
        reader_->Finish();
        return absl::OkStatus();
      }
    }
    return Finish();
  }

 private:
  std::unique_ptr<grpc::ClientContext> ctx_;
  CancelScope scope_;
  AccessTokens* const tokens_;
  std::unique_ptr<Reader> reader_;
};

template <class T>
using ServerStreamPtr = std::unique_ptr<ServerStream<T>>;

namespace internal {

template <class Stub, class Req, class T>
using StreamMethod = std::unique_ptr<grpc::ClientReaderInterface<T>> (Stub::*)(grpc::ClientContext*,
                                                                               const Req&);

// Opens `method` on `stub` with `call`'s deadline (the default: none, a stream is long) and the
// service's token from `tokens` unless the call carries one. Errors: UNAVAILABLE when no
// service token could be had; the call's own come from the stream.
template <class Stub, class Req, class T>
absl::StatusOr<ServerStreamPtr<T>> OpenServerStream(Stub& stub, StreamMethod<Stub, Req, T> method,
                                                    const Req& req, const CallContext& call,
                                                    AccessTokens* tokens = nullptr) {
  absl::StatusOr<CallContext> authorized = WithServiceToken(call, tokens);
  if (!authorized.ok()) return authorized.status();
  return std::make_unique<ServerStream<T>>(
      authorized->NewClientContext(absl::InfiniteDuration()), call.cancellation(), tokens,
      [&](grpc::ClientContext* ctx) { return (stub.*method)(ctx, req); });
}

}  // namespace internal
}  // namespace gpuaas::client
