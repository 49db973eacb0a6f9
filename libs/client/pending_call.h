// A unary call started without waiting for its answer (a typed client's Start<Rpc> method), so
// that one thread can have several calls in flight and wait for them together: the wait is the
// slowest call's, not the sum of all.
//
//   client::PendingCall<stockpb::Spec> spec = stock.StartGetSpec(spec_req, call);
//   client::PendingCall<authpb::Tenant> tenant = auth.StartGetTenant(tenant_req, call);
//   GPUAAS_ASSIGN_OR_RETURN(stockpb::Spec s, spec.Wait());     // tenant is still in flight
//   GPUAAS_ASSIGN_OR_RETURN(authpb::Tenant t, tenant.Wait());
//
// A call dropped before its answer was waited for is cancelled, and the destructor waits until
// gRPC has let go of it (at once: a cancelled call completes), so an early return leaves nothing
// running that points into freed memory. No thread is spent on a call in flight: gRPC's callback
// API completes it.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "libs/rpc/status.h"

namespace gpuaas::client {

namespace internal {

// What a call in flight owns; gRPC writes `resp` and `status`, then `done` is notified.
template <class Resp>
struct CallState {
  virtual ~CallState() = default;
  std::unique_ptr<grpc::ClientContext> ctx;
  Resp resp;
  grpc::Status status;
  absl::Notification done;
};

// The request too, which gRPC may read until the call completes.
template <class Req, class Resp>
struct CallStateWith final : CallState<Resp> {
  explicit CallStateWith(const Req& r) : req(r) {}
  Req req;
};

}  // namespace internal

template <class Resp>
class PendingCall final {
 public:
  explicit PendingCall(std::unique_ptr<internal::CallState<Resp>> state)
      : state_(std::move(state)) {}
  PendingCall(PendingCall&& other) noexcept = default;
  PendingCall& operator=(PendingCall&&) = delete;
  PendingCall(const PendingCall&) = delete;
  PendingCall& operator=(const PendingCall&) = delete;
  ~PendingCall() {
    if (state_ == nullptr) return;  // moved from
    if (!state_->done.HasBeenNotified()) state_->ctx->TryCancel();
    state_->done.WaitForNotification();
  }

  // Blocks until the answer or the call's deadline. Errors: as the blocking method's (the
  // server's code and message; UNAVAILABLE, DEADLINE_EXCEEDED or CANCELLED from gRPC). Call
  // once: the answer is moved out.
  absl::StatusOr<Resp> Wait() {
    state_->done.WaitForNotification();
    if (!state_->status.ok()) return rpc::FromGrpcStatus(state_->status);
    return std::move(state_->resp);
  }

 private:
  std::unique_ptr<internal::CallState<Resp>> state_;
};

}  // namespace gpuaas::client
