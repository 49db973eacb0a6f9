// The non-template side of a bidirectional stream (see libs/rpc/stream.h): authentication, the
// read → OnMessage → write → read cycle on the worker pool, exceptions → INTERNAL, and the
// registration with the registry Server::Shutdown ends open streams through.
//
// Exactly one party owns a stream's next step at any time: the pool task running open or
// OnMessage, the pending read's completion, or the pending write's completion. The owner alone
// starts the next gRPC operation, so there is never more than one in flight and never one
// after Finish. The one exception is End (shutdown), which may finish a stream whose read is
// pending: gRPC then fails that read, and its completion finds the stream finished.
//
// gRPC may run a reaction inline, on the thread that starts an operation, and the last one
// (OnDone) deletes the reactor; so no lock is held while an operation starts, and whoever
// starts one holds a reference to the StreamCall.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "libs/rpc/handler.h"
#include "libs/rpc/internal/open_streams.h"
#include "libs/rpc/stream.h"

namespace gpuaas::rpc::internal {

class StreamCall final : public EndableStream, public std::enable_shared_from_this<StreamCall> {
 public:
  StreamCall(Handler& handler, grpc::CallbackServerContext& ctx, TypedStream& typed);

  // On the gRPC thread that runs the method handler: registers the stream and queues its
  // authentication and `open` on the pool.
  void Start();
  void ReadDone(bool ok);
  void WriteDone(bool ok);
  // OnDone: the session's OnEnd with the stream's final status, then unregisters.
  void Done();
  // Ends the stream with `status`: at once when it waits for the client's next message,
  // else when its current step is done. Later calls are ignored.
  void End(const absl::Status& status) override;

 private:
  enum class Phase { kWorking, kReading, kWriting, kFinished };

  void Open();           // on the pool
  void HandleMessage();  // on the pool
  // After open or OnMessage returned `status`: finish, write the reply, or read on.
  void AfterWork(const absl::Status& status, bool reply);
  // Queues `work` on the pool, or finishes the stream UNAVAILABLE when the queue is full.
  void Submit(void (StreamCall::*work)());
  // Starts the next read, or finishes when End asked for it.
  void ReadNext();
  // Finishes with `status` unless the stream already finished.
  void FinishNow(const absl::Status& status);
  // Claims the one Finish: false when someone else already did.
  bool ClaimFinish(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The status OnEnd hears: what was sent, unless the client went away first.
  absl::Status EndStatus();

  Handler& handler_;
  grpc::CallbackServerContext& ctx_;
  TypedStream& typed_;
  std::string authorization_;  // copied on the gRPC thread, read by Open

  absl::Mutex mu_;
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kWorking;
  // Counts reads started, so that a thread returning from StartRead can tell whether the read
  // it started is still the pending one.
  uint64_t reads_ ABSL_GUARDED_BY(mu_) = 0;
  // The pending read has been started (StartRead returned); only then may End finish.
  bool read_started_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<absl::Status> end_requested_ ABSL_GUARDED_BY(mu_);
  absl::Status finished_with_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::rpc::internal
