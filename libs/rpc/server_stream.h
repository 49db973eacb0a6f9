// Server-streaming RPCs whose messages the server pushes whenever it has them (watches,
// desired-state feeds), on gRPC's callback API, with what Handler::Run gives unary calls:
// bearer-token authentication and `open` on the worker pool, exceptions → INTERNAL, the one
// status mapping, the per-call log line, and an end with UNAVAILABLE at Server::Shutdown. An
// idle stream holds no thread.
//
//   grpc::ServerWriteReactor<Change>* Watch(grpc::CallbackServerContext* ctx,
//                                           const WatchRequest* req) override {
//     return handler_.RunServerStream<WatchRequest, Change>(
//         ctx, req,
//         [this](const authz::Principal& p, const WatchRequest& r,
//                std::shared_ptr<rpc::StreamWriter<Change>> out)
//             -> absl::StatusOr<std::unique_ptr<rpc::PushSession>> {
//           return watches_.Open(p, r, std::move(out));  // keeps `out`, Sends to it later
//         });
//   }
//
// Flow control: Send queues and returns at once; one write is in flight at a time. A client
// that reads too slowly lets the queue grow to its bound, and the stream then ends
// RESOURCE_EXHAUSTED (the client resumes, e.g. from the last revision it saw) instead of the
// server holding an unbounded backlog.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "libs/authz/principal.h"
#include "libs/rpc/handler.h"
#include "libs/rpc/internal/open_streams.h"

namespace gpuaas::rpc {

// Where a server stream's messages go. Thread-safe; never blocks.
template <class Out>
class StreamWriter {
 public:
  virtual ~StreamWriter() = default;
  // Queues `message` for the client. False when the stream has ended or is ending (the
  // message is dropped); a full queue ends the stream RESOURCE_EXHAUSTED.
  virtual bool Send(Out message) = 0;
  // Ends the stream with `status` once the queued messages are written.
  virtual void Finish(const absl::Status& status) = 0;
};

// One open server stream's server side, kept until the stream ends.
class PushSession {
 public:
  virtual ~PushSession() = default;
  // Once, when the stream ended for any reason: the status sent, or CANCELLED when the client
  // went away. On whichever thread saw the end; must not block long. The session is destroyed
  // right after.
  virtual void OnEnd(const absl::Status& status) {}
};

namespace internal {

// The non-template steps, in server_stream.cc.
class PushSupport final {
 public:
  // Registers `stream` for Server::Shutdown; the status to end with at once when refused.
  static absl::Status Register(Handler& handler, const std::shared_ptr<EndableStream>& stream);
  static void Unregister(Handler& handler, const EndableStream* stream);
  // Authenticates `authorization` and runs `open` on the pool, exceptions → INTERNAL; `done`
  // gets the result. False when the pool's queue is full (nothing ran).
  static bool OpenOnPool(Handler& handler, grpc::CallbackServerContext& ctx,
                         std::string authorization,
                         std::function<absl::Status(const authz::Principal&)> open,
                         std::function<void(const absl::Status&)> done);
  static std::string Authorization(const grpc::CallbackServerContext& ctx);
  static grpc::Status ToGrpc(const absl::Status& status);
  static absl::Status QueueFull(size_t limit);
};

// The shared state of one stream: outlives the reactor for as long as a producer holds the
// writer. Exactly one write is in flight at a time, none before `open` returned (the context
// and request must stay valid while it runs, and gRPC frees them once the stream finished),
// none after Finish, and Finish once.
template <class Out>
class PushCall final : public StreamWriter<Out>,
                       public EndableStream,
                       public std::enable_shared_from_this<PushCall<Out>> {
 public:
  PushCall(Handler& handler, grpc::ServerWriteReactor<Out>& reactor, size_t max_queue)
      : handler_(handler), reactor_(reactor), max_queue_(max_queue) {}

  bool Send(Out message) override {
    bool queued = false;
    {
      absl::MutexLock lock(&mu_);
      if (finish_.has_value()) {
        return false;
      }
      if (queue_.size() >= max_queue_) {
        RequestFinishLocked(PushSupport::QueueFull(max_queue_), /*drop_queue=*/true);
      } else {
        queue_.push_back(std::move(message));
        queued = true;
      }
    }
    Pump();
    return queued;
  }

  void Finish(const absl::Status& status) override { RequestFinish(status, false); }
  void End(const absl::Status& status) override { RequestFinish(status, true); }

  // `open` returned `status` (its session, if any, already adopted).
  void Opened(const absl::Status& status) {
    {
      absl::MutexLock lock(&mu_);
      opening_ = false;
      if (!status.ok()) {
        RequestFinishLocked(status, true);
      }
    }
    Pump();
  }

  void WriteDone(bool ok) {
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) {
        RequestFinishLocked(absl::CancelledError("the client went away"), true);
      }
    }
    Pump();
  }

  void Done() {
    std::unique_ptr<PushSession> session;
    absl::Status status;
    {
      absl::MutexLock lock(&mu_);
      session = std::move(session_);
      status = finished_with_;
    }
    if (session != nullptr) {
      session->OnEnd(status);
    }
    PushSupport::Unregister(handler_, this);
  }

  void Adopt(std::unique_ptr<PushSession> session) {
    absl::MutexLock lock(&mu_);
    session_ = std::move(session);
  }

 private:
  void RequestFinish(const absl::Status& status, bool drop_queue) {
    {
      absl::MutexLock lock(&mu_);
      RequestFinishLocked(status, drop_queue);
    }
    Pump();
  }

  void RequestFinishLocked(const absl::Status& status, bool drop_queue)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!finish_.has_value()) {
      finish_ = status;
    }
    if (drop_queue) {
      queue_.clear();
    }
  }

  // Starts the next write, or the Finish once the queue is drained. No lock is held while a
  // gRPC operation starts: its reaction may run inline.
  void Pump() {
    std::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      if (opening_ || writing_ || finished_) {
        return;
      }
      if (!queue_.empty()) {
        current_ = std::move(queue_.front());
        queue_.pop_front();
        writing_ = true;
      } else if (finish_.has_value()) {
        finished_ = true;
        finished_with_ = *finish_;
        finish = PushSupport::ToGrpc(*finish_);
      } else {
        return;
      }
    }
    if (finish.has_value()) {
      reactor_.Finish(*std::move(finish));
    } else {
      reactor_.StartWrite(&current_);
    }
  }

  Handler& handler_;
  grpc::ServerWriteReactor<Out>& reactor_;
  const size_t max_queue_;

  absl::Mutex mu_;
  std::deque<Out> queue_ ABSL_GUARDED_BY(mu_);
  Out current_;  // the message in flight: written only while no write is
  bool opening_ ABSL_GUARDED_BY(mu_) = true;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<absl::Status> finish_ ABSL_GUARDED_BY(mu_);
  absl::Status finished_with_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<PushSession> session_ ABSL_GUARDED_BY(mu_);
};

template <class Out>
class PushReactor final : public grpc::ServerWriteReactor<Out> {
 public:
  PushReactor(Handler& handler, size_t max_queue)
      : call_(std::make_shared<PushCall<Out>>(handler, *this, max_queue)) {}

  std::shared_ptr<PushCall<Out>> call() { return call_; }

  void OnWriteDone(bool ok) override { call_->WriteDone(ok); }
  void OnCancel() override { call_->End(absl::CancelledError("the client went away")); }
  void OnDone() override {
    call_->Done();
    delete this;
  }

 private:
  std::shared_ptr<PushCall<Out>> call_;
};

}  // namespace internal

// How many messages a server stream queues for a slow client before it ends the stream.
inline constexpr size_t kDefaultPushQueue = 1024;

template <class Req, class Out>
grpc::ServerWriteReactor<Out>* Handler::RunServerStream(
    grpc::CallbackServerContext* ctx, const Req* request,
    std::function<absl::StatusOr<std::unique_ptr<PushSession>>(const authz::Principal&, const Req&,
                                                               std::shared_ptr<StreamWriter<Out>>)>
        open) {
  auto* reactor = new internal::PushReactor<Out>(*this, kDefaultPushQueue);
  std::shared_ptr<internal::PushCall<Out>> call = reactor->call();
  if (absl::Status admitted = internal::PushSupport::Register(*this, call); !admitted.ok()) {
    call->Opened(admitted);
    return reactor;
  }
  bool queued = internal::PushSupport::OpenOnPool(
      *this, *ctx, internal::PushSupport::Authorization(*ctx),
      [call, request, open = std::move(open)](const authz::Principal& p) -> absl::Status {
        absl::StatusOr<std::unique_ptr<PushSession>> session = open(p, *request, call);
        if (!session.ok()) {
          return session.status();
        }
        call->Adopt(*std::move(session));
        return absl::OkStatus();
      },
      [call](const absl::Status& status) { call->Opened(status); });
  if (!queued) {
    call->Opened(absl::UnavailableError("server overloaded, retry"));
  }
  return reactor;
}

}  // namespace gpuaas::rpc
