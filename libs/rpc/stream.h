// Bidirectional streaming RPCs on gRPC's callback API, with what Handler::Run gives unary calls:
// bearer-token authentication, the work on the worker pool, exceptions → INTERNAL, the one
// status mapping, the per-call log line and metrics (one entry per stream, at its end), and a
// prompt end with UNAVAILABLE at Server::Shutdown. An idle stream holds no thread: between
// messages it is only a read pending inside gRPC.
//
//   class HeartbeatSession final : public rpc::StreamSession<HeartbeatRequest, HeartbeatResponse> {
//    public:
//     absl::StatusOr<std::optional<HeartbeatResponse>> OnMessage(
//         const HeartbeatRequest& request) override;  // may block on PostgreSQL
//   };
//
//   grpc::ServerBidiReactor<HeartbeatRequest, HeartbeatResponse>* Heartbeat(
//       grpc::CallbackServerContext* ctx) override {
//     return handler_.RunBidi<HeartbeatRequest, HeartbeatResponse>(
//         ctx, [this](const authz::Principal& p)
//                  -> absl::StatusOr<std::unique_ptr<
//                      rpc::StreamSession<HeartbeatRequest, HeartbeatResponse>>> {
//           if (!p.IsService()) return absl::PermissionDeniedError("...");
//           return std::make_unique<HeartbeatSession>(nodes_, p);
//         });
//   }
//
// In/Out cannot be deduced from a lambda, hence the explicit template arguments.
//
// Flow control: a message's reply is written, and its write completed, before the next message
// is read; a slow session or a slow client therefore slows its own stream down (HTTP/2 flow
// control pushes back on the sender) and never queues messages inside the server.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libs/authz/principal.h"
#include "libs/rpc/handler.h"

namespace gpuaas::rpc {

// One open bidirectional stream's server side. Created after the caller authenticated.
template <class In, class Out>
class StreamSession {
 public:
  virtual ~StreamSession() = default;

  // Each message, in order, one at a time, on the worker pool. Return a reply (or std::nullopt
  // for none); a non-OK status ends the stream with that status (mapped as unary calls are).
  // An exception ends it INTERNAL "internal error" (the detail goes to the log only).
  virtual absl::StatusOr<std::optional<Out>> OnMessage(const In& message) = 0;

  // Once, when the stream ended for any reason, after the last OnMessage returned: OK when the
  // client half-closed, CANCELLED (DEADLINE_EXCEEDED) when the client went away, UNAVAILABLE at
  // server shutdown, or the status OnMessage ended it with. On whichever thread saw the stream
  // end (a gRPC thread, a worker, or the one in Server::Shutdown); must not block long. Not
  // called when `open` failed (there was no session).
  virtual void OnEnd(const absl::Status& status) {}
};

namespace internal {

class StreamCall;  // the state machine, in stream_call.cc

// The typed half of a stream: gRPC's templated operations and the session's typed calls.
// StreamCall drives them and never calls two at once, nor any after the stream finished.
class TypedStream {
 public:
  virtual void ReadNext() = 0;
  virtual void WriteReply() = 0;
  virtual void FinishWith(grpc::Status status) = 0;
  // Runs the caller's `open`; keeps the session it returns.
  virtual absl::Status OpenSession(const authz::Principal& principal) = 0;
  // Runs OnMessage on the message read last: true when it left a reply to write.
  virtual absl::StatusOr<bool> HandleMessage() = 0;
  // The session's OnEnd, when there is a session.
  virtual void EndSession(const absl::Status& status) = 0;

 protected:
  ~TypedStream() = default;
};

// Registers the stream with `handler` and starts authenticating it on the pool.
std::shared_ptr<StreamCall> StartStream(Handler& handler, grpc::CallbackServerContext* ctx,
                                        TypedStream& typed);
// gRPC's reactions, forwarded.
void OnStreamReadDone(StreamCall& call, bool ok);
void OnStreamWriteDone(StreamCall& call, bool ok);
// Runs the session's OnEnd; after it returns nothing touches the TypedStream again.
void OnStreamDone(StreamCall& call);

template <class In, class Out>
class BidiReactor final : public grpc::ServerBidiReactor<In, Out>, private TypedStream {
 public:
  using Open = std::function<absl::StatusOr<std::unique_ptr<StreamSession<In, Out>>>(
      const authz::Principal&)>;

  explicit BidiReactor(Open open) : open_(std::move(open)) {}

  // gRPC binds the reactor, and so calls none of the reactions below, only after the method
  // handler returned it, which is after `call_` is set.
  void Start(Handler& handler, grpc::CallbackServerContext* ctx) {
    call_ = StartStream(handler, ctx, *this);
  }

  void OnReadDone(bool ok) override { OnStreamReadDone(*call_, ok); }
  void OnWriteDone(bool ok) override { OnStreamWriteDone(*call_, ok); }
  void OnDone() override {
    OnStreamDone(*call_);
    delete this;
  }

 private:
  void ReadNext() override { this->StartRead(&request_); }
  void WriteReply() override { this->StartWrite(&reply_); }
  void FinishWith(grpc::Status status) override { this->Finish(std::move(status)); }

  absl::Status OpenSession(const authz::Principal& principal) override {
    absl::StatusOr<std::unique_ptr<StreamSession<In, Out>>> session = open_(principal);
    open_ = nullptr;  // whatever it captured is not needed any more
    if (!session.ok()) {
      return session.status();
    }
    session_ = *std::move(session);
    return session_ != nullptr ? absl::OkStatus() : absl::InternalError("internal error");
  }

  absl::StatusOr<bool> HandleMessage() override {
    absl::StatusOr<std::optional<Out>> reply = session_->OnMessage(request_);
    if (!reply.ok()) {
      return reply.status();
    }
    if (!reply->has_value()) {
      return false;
    }
    reply_ = **std::move(reply);
    return true;
  }

  void EndSession(const absl::Status& status) override {
    if (session_ != nullptr) {
      session_->OnEnd(status);
    }
  }

  Open open_;
  std::unique_ptr<StreamSession<In, Out>> session_;
  In request_;
  Out reply_;
  std::shared_ptr<StreamCall> call_;
};

}  // namespace internal

template <class In, class Out>
grpc::ServerBidiReactor<In, Out>* Handler::RunBidi(
    grpc::CallbackServerContext* ctx,
    std::function<absl::StatusOr<std::unique_ptr<StreamSession<In, Out>>>(const authz::Principal&)>
        open) {
  auto* reactor = new internal::BidiReactor<In, Out>(std::move(open));
  reactor->Start(*this, ctx);
  return reactor;
}

}  // namespace gpuaas::rpc
