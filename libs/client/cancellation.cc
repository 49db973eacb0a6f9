#include "libs/client/cancellation.h"

namespace gpuaas::client {

void Cancellation::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  for (grpc::ClientContext* ctx : active_) ctx->TryCancel();
}

void Cancellation::Attach(grpc::ClientContext& ctx) {
  absl::MutexLock lock(&mu_);
  // A context cancelled before its call starts fails that call at once with CANCELLED.
  if (cancelled_) ctx.TryCancel();
  active_.insert(&ctx);
}

void Cancellation::Detach(grpc::ClientContext& ctx) {
  absl::MutexLock lock(&mu_);
  active_.erase(&ctx);
}

CancelScope::CancelScope(Cancellation* cancellation, grpc::ClientContext& ctx)
    : cancellation_(cancellation), ctx_(ctx) {
  if (cancellation_ != nullptr) cancellation_->Attach(ctx_);
}

CancelScope::~CancelScope() {
  if (cancellation_ != nullptr) cancellation_->Detach(ctx_);
}

}  // namespace gpuaas::client
