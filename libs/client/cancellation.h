// How a long-running loop's Stop() ends the call it is blocked in, from another thread. Every
// call started with a CallContext that carries a Cancellation (set_cancellation) is cancelled
// by Cancel(); once cancelled, a call started with it fails at once with CANCELLED.
//
//   client::Cancellation cancel_;  // beside the loop's stop flag
//   // the loop:  client.WatchWorkloads(req, on_set,
//   client::CallContext().set_cancellation(cancel_));
//   // Stop():    cancel_.Cancel();  // the watch returns CANCELLED
#pragma once

#include <grpcpp/client_context.h>

#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas::client {

class Cancellation final {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  // Cancels every call in flight with this object and every later one. Idempotent,
  // thread-safe, never blocks.
  void Cancel();

 private:
  friend class CancelScope;
  void Attach(grpc::ClientContext& ctx);
  void Detach(grpc::ClientContext& ctx);

  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::set<grpc::ClientContext*> active_ ABSL_GUARDED_BY(mu_);
};

// Ties one call's context to a Cancellation (none when null) for the scope's life; the context
// must outlive the scope. Typed clients hold one per call; nothing else needs to.
class CancelScope final {
 public:
  CancelScope(Cancellation* cancellation, grpc::ClientContext& ctx);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  Cancellation* const cancellation_;
  grpc::ClientContext& ctx_;
};

}  // namespace gpuaas::client
