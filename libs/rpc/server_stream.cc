#include "libs/rpc/server_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "libs/rpc/status.h"

namespace gpuaas::rpc::internal {

absl::Status PushSupport::Register(Handler& handler, const std::shared_ptr<EndableStream>& stream) {
  return handler.streams_->Add(stream);
}

void PushSupport::Unregister(Handler& handler, const EndableStream* stream) {
  handler.streams_->Remove(stream);
}

bool PushSupport::OpenOnPool(Handler& handler, grpc::CallbackServerContext& ctx,
                             std::string authorization,
                             std::function<absl::Status(const authz::Principal&)> open,
                             std::function<void(const absl::Status&)> done) {
  return handler.pool_.TrySubmit([&handler, &ctx, authorization = std::move(authorization),
                                  open = std::move(open), done = std::move(done)] {
    done(handler.Guarded(ctx, [&]() -> absl::Status {
      absl::StatusOr<authz::Principal> principal = handler.Authenticate(ctx, authorization);
      if (!principal.ok()) {
        return principal.status();
      }
      return open(*principal);
    }));
  });
}

std::string PushSupport::Authorization(const grpc::CallbackServerContext& ctx) {
  return Handler::AuthorizationHeader(ctx);
}

grpc::Status PushSupport::ToGrpc(const absl::Status& status) { return ToGrpcStatus(status); }

absl::Status PushSupport::QueueFull(size_t limit) {
  return absl::ResourceExhaustedError(
      absl::StrCat("the client reads too slowly: ", limit,
                   " messages queued; reconnect (resume where it left off)"));
}

}  // namespace gpuaas::rpc::internal
