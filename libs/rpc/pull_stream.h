// Server-streaming RPCs whose messages come from a source that blocks while it waits for them
// (a log file being followed, another server's stream being relayed), with what Handler::Run
// gives unary calls: bearer-token authentication and `open` on the worker pool, exceptions →
// INTERNAL, the one status mapping, the per-call log line, and an end with UNAVAILABLE at
// Server::Shutdown.
//
// Unlike RunServerStream (server_stream.h), which queues what a producer pushes, each stream
// here has a thread of its own that asks its source for the next message only once the
// previous one is written: a slow client slows its source down instead of growing a queue, and
// the backlog stays where it already is (the file, the upstream stream). A thread per stream
// suits streams that people open (logs), not thousands of watches: bound them in `open`.
//
//   grpc::ServerWriteReactor<LogChunk>* ReadLogs(grpc::CallbackServerContext* ctx,
//                                                const ReadLogsRequest* req) override {
//     return rpc::RunPullStream<ReadLogsRequest, LogChunk>(
//         handler_, ctx, req,
//         [this](const authz::Principal& p, const ReadLogsRequest& r,
//                grpc::CallbackServerContext& c) { return logs_.Open(p, r, c); });
//   }
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "libs/authz/principal.h"
#include "libs/rpc/handler.h"
#include "libs/rpc/internal/open_streams.h"
#include "libs/rpc/server_stream.h"

namespace gpuaas::rpc {

// Where one stream's messages come from. Next runs on the stream's own thread, Cancel on any.
template <class Out>
class PullSource {
 public:
  virtual ~PullSource() = default;
  // Blocks until the next message. nullopt ends the stream OK; an error ends it with that
  // status. Must return soon after Cancel.
  virtual absl::StatusOr<std::optional<Out>> Next() = 0;
  // The stream is ending (the client went away, its deadline passed, the server shuts down):
  // make Next return. Called with the stream's lock held: must not block. May come more than
  // once, before or during Next.
  virtual void Cancel() = 0;
};

template <class Out>
using PullSourcePtr = std::unique_ptr<PullSource<Out>>;

namespace internal {

// The state one stream's reactor and thread share; outlives the reactor while the thread runs.
template <class Out>
class PullCall final : public EndableStream, public std::enable_shared_from_this<PullCall<Out>> {
 public:
  PullCall(Handler& handler, grpc::ServerWriteReactor<Out>& reactor)
      : handler_(handler), reactor_(reactor) {}

  void End(const absl::Status& status) override {
    absl::MutexLock lock(&mu_);
    if (!ended_.has_value()) ended_ = status;
    if (source_ != nullptr) source_->Cancel();
  }

  void WriteDone(bool ok) {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok && !ended_.has_value()) ended_ = absl::CancelledError("the client went away");
  }

  // `open` finished on the pool: with a source, start the stream's thread; else finish.
  void Opened(const absl::Status& status, PullSourcePtr<Out> source) {
    if (!status.ok() || source == nullptr) {
      reactor_.Finish(PushSupport::ToGrpc(status));
      return;
    }
    std::thread([self = this->shared_from_this(), source = std::move(source)]() mutable {
      self->Pump(std::move(source));
    }).detach();
  }

  void Done() { PushSupport::Unregister(handler_, this); }

 private:
  // The stream's thread: one message at a time, each written before the next is asked for.
  void Pump(PullSourcePtr<Out> source) {
    {
      absl::MutexLock lock(&mu_);
      source_ = source.get();
      if (ended_.has_value()) source_->Cancel();
    }
    absl::Status status;
    for (;;) {
      absl::StatusOr<std::optional<Out>> next = source->Next();
      if (!next.ok() || !next->has_value()) {
        status = next.status();
        break;
      }
      current_ = **std::move(next);
      {
        absl::MutexLock lock(&mu_);
        if (ended_.has_value()) break;
        writing_ = true;
      }
      reactor_.StartWrite(&current_);
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](bool* writing) { return !*writing; }, &writing_));
    }
    {
      absl::MutexLock lock(&mu_);
      source_ = nullptr;
      if (ended_.has_value()) status = *ended_;  // what really ended it
    }
    source.reset();
    reactor_.Finish(PushSupport::ToGrpc(status));  // the last touch of the reactor
  }

  Handler& handler_;
  grpc::ServerWriteReactor<Out>& reactor_;
  Out current_;  // the message in flight

  absl::Mutex mu_;
  std::optional<absl::Status> ended_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  PullSource<Out>* source_ ABSL_GUARDED_BY(mu_) = nullptr;
};

template <class Out>
class PullReactor final : public grpc::ServerWriteReactor<Out> {
 public:
  explicit PullReactor(Handler& handler) : call_(std::make_shared<PullCall<Out>>(handler, *this)) {}

  std::shared_ptr<PullCall<Out>> call() { return call_; }

  void OnWriteDone(bool ok) override { call_->WriteDone(ok); }
  void OnCancel() override { call_->End(absl::CancelledError("the client went away")); }
  void OnDone() override {
    call_->Done();
    delete this;
  }

 private:
  std::shared_ptr<PullCall<Out>> call_;
};

}  // namespace internal

// Authenticates the call, runs `open` on the handler's pool (PERMISSION_DENIED, validation and
// lookups belong there; its error or exception finishes the stream), then pulls the source on
// a thread of the stream's own until it ends, the client goes away or the server shuts down.
// `ctx` stays valid until the source is destroyed (downstream calls may derive from it).
template <class Req, class Out>
grpc::ServerWriteReactor<Out>* RunPullStream(
    Handler& handler, grpc::CallbackServerContext* ctx, const Req* request,
    std::function<absl::StatusOr<PullSourcePtr<Out>>(const authz::Principal&, const Req&,
                                                     grpc::CallbackServerContext&)>
        open) {
  auto* reactor = new internal::PullReactor<Out>(handler);
  std::shared_ptr<internal::PullCall<Out>> call = reactor->call();
  if (absl::Status admitted = internal::PushSupport::Register(handler, call); !admitted.ok()) {
    call->Opened(admitted, nullptr);
    return reactor;
  }
  auto source = std::make_shared<PullSourcePtr<Out>>();
  bool queued = internal::PushSupport::OpenOnPool(
      handler, *ctx, internal::PushSupport::Authorization(*ctx),
      [ctx, request, source, open = std::move(open)](const authz::Principal& p) -> absl::Status {
        absl::StatusOr<PullSourcePtr<Out>> opened = open(p, *request, *ctx);
        if (!opened.ok()) return opened.status();
        *source = *std::move(opened);
        return absl::OkStatus();
      },
      [call, source](const absl::Status& status) { call->Opened(status, std::move(*source)); });
  if (!queued) {
    call->Opened(absl::UnavailableError("server overloaded, retry"), nullptr);
  }
  return reactor;
}

}  // namespace gpuaas::rpc
