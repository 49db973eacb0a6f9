#include "libs/rpc/interceptor.h"

#include <grpc/grpc.h>
#include <grpcpp/server_context.h>

#include <atomic>
#include <chrono>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "libs/rpc/handler.h"
#include "libs/rpc/status.h"

namespace gpuaas::rpc {
namespace {

// The streams anyone may open without a token.
bool IsPublicStream(std::string_view method) {
  return method == "/grpc.health.v1.Health/Watch" ||
         method == "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo" ||
         method == "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
}

class CallLogInterceptor final : public grpc::experimental::Interceptor {
 public:
  CallLogInterceptor(grpc::experimental::ServerRpcInfo& info, CallRegistry& calls,
                     RpcMetrics& metrics, SlotLimiter& public_streams, spdlog::logger& logger)
      : ctx_(*info.server_context()),
        method_(info.method() != nullptr ? info.method() : "/unknown/unknown"),
        calls_(calls),
        metrics_(metrics),
        logger_(logger),
        start_(std::chrono::steady_clock::now()),
        streaming_(info.type() != grpc::experimental::ServerRpcInfo::Type::UNARY),
        // The synchronous API's IsCancelled plucks the very completion that POST_RECV_CLOSE is
        // part of, so only callback streams (ours; reflection is synchronous) end there.
        end_at_close_(streaming_ &&
                      dynamic_cast<const grpc::CallbackServerContext*>(&ctx_) != nullptr) {
    calls_.Begin(ctx_, method_);
    if (end_at_close_) {
      // Now, while the transport is certainly there: a stream often ends because it is gone.
      peer_ = PeerAddress(ctx_.peer());
    }
    if (streaming_) {
      metrics_.StreamOpened();
    } else {
      metrics_.CallStarted();
    }
    if (IsPublicStream(method_)) {
      public_streams_ = &public_streams;
    }
  }

  ~CallLogInterceptor() override {
    // Only reached without a status when the call died before its handler answered. The
    // context is being destroyed around us, so only its address may be used now.
    if (!done_.exchange(true)) {
      End(grpc::StatusCode::CANCELLED, /*context_alive=*/false);
    }
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    // Not at construction: a synchronous call (reflection) has no peer yet then.
    if (public_streams_ != nullptr &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      TakePublicSlot();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      grpc::StatusCode sent = methods->GetSendStatus().error_code();
      if (end_at_close_) {
        sent_.store(static_cast<int>(sent));
      } else if (!done_.exchange(true)) {
        End(EffectiveCode(sent), /*context_alive=*/true);
      }
    }
    // A stream ends when its call closes, once gRPC knows for certain whether the client went
    // away: at the status it may still be an ordinary half-close (OK) whose cancellation is on
    // its way. The context lives until this hook has run.
    if (end_at_close_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_CLOSE) &&
        !done_.exchange(true)) {
      End(StreamCode(), /*context_alive=*/true);
    }
    methods->Proceed();
  }

 private:
  void TakePublicSlot() {
    absl::StatusOr<SlotLimiter::Slot> slot = public_streams_->Acquire(PeerAddress(ctx_.peer()));
    if (slot.ok()) {
      public_slot_ = *std::move(slot);
      return;
    }
    refused_ = true;
    // A status with the cancellation goes to the client as the call's trailers; the handler
    // then finds the call over (reflection's Read fails) and holds nothing.
    grpc_call_cancel_with_status(ctx_.c_call(), GRPC_STATUS_RESOURCE_EXHAUSTED,
                                 std::string(slot.status().message()).c_str(), nullptr);
  }

  // A status sent after the client gave up never reaches it; report what the client saw, as
  // far as the server can tell (a cancellation may not have arrived yet).
  grpc::StatusCode EffectiveCode(grpc::StatusCode sent) const {
    if (ctx_.deadline() <= std::chrono::system_clock::now()) {
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    }
    return ctx_.IsCancelled() ? grpc::StatusCode::CANCELLED : sent;
  }

  // A stream's code, as StreamSession::OnEnd hears it: a non-OK status the server sent is its
  // own decision (UNAVAILABLE at shutdown, an OnMessage error) and says more than the
  // cancellation that may follow it; an OK one counts only if the client did not go away.
  grpc::StatusCode StreamCode() const {
    int sent = sent_.load();
    if (sent > 0) {
      return static_cast<grpc::StatusCode>(sent);
    }
    if (ctx_.IsCancelled() || sent < 0) {
      return ctx_.deadline() <= std::chrono::system_clock::now()
                 ? grpc::StatusCode::DEADLINE_EXCEEDED
                 : grpc::StatusCode::CANCELLED;
    }
    return grpc::StatusCode::OK;
  }

  void End(grpc::StatusCode code, bool context_alive) {
    if (refused_) {
      code = grpc::StatusCode::RESOURCE_EXHAUSTED;  // what the client got, not the cancellation
    }
    // Monotonic: a wall-clock step must not produce negative or huge latencies.
    absl::Duration latency = absl::FromChrono(std::chrono::steady_clock::now() - start_);
    std::string principal = calls_.End(ctx_);
    // Recorded before it leaves the in-flight gauge, so a scrape that sees no call in flight
    // has every finished call counted.
    if (streaming_) {
      metrics_.RecordStream(method_, code);
      metrics_.StreamClosed();
    } else {
      metrics_.Record(method_, code, latency);
      metrics_.CallEnded();
    }
    if (logger_.should_log(spdlog::level::info)) {
      logger_.info("method={} principal={} code={} ms={:.3f} peer={}", method_,
                   principal.empty() ? "-" : principal, StatusCodeName(code),
                   absl::ToDoubleMilliseconds(latency),
                   end_at_close_   ? peer_
                   : context_alive ? PeerAddress(ctx_.peer())
                                   : "-");
    }
  }

  grpc::ServerContextBase& ctx_;
  const char* method_;
  CallRegistry& calls_;
  RpcMetrics& metrics_;
  spdlog::logger& logger_;
  std::chrono::steady_clock::time_point start_;
  const bool streaming_;
  const bool end_at_close_;
  std::string peer_;  // end_at_close_ only
  // end_at_close_ only: the code of the status sent, -1 before one is.
  std::atomic<int> sent_{-1};
  std::atomic<bool> done_{false};
  SlotLimiter* public_streams_ = nullptr;  // set for the streams anyone may open
  std::atomic<bool> refused_{false};       // such a stream found no slot
  SlotLimiter::Slot public_slot_;          // held while such a stream is open
};

class CallLogInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  CallLogInterceptorFactory(CallRegistry& calls, RpcMetrics& metrics, SlotLimiter& public_streams,
                            std::shared_ptr<spdlog::logger> logger)
      : calls_(calls),
        metrics_(metrics),
        public_streams_(public_streams),
        logger_(std::move(logger)) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new CallLogInterceptor(*info, calls_, metrics_, public_streams_, *logger_);
  }

 private:
  CallRegistry& calls_;
  RpcMetrics& metrics_;
  SlotLimiter& public_streams_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewCallLogInterceptorFactory(
    CallRegistry& calls, RpcMetrics& metrics, SlotLimiter& public_streams,
    std::shared_ptr<spdlog::logger> logger) {
  return std::make_unique<CallLogInterceptorFactory>(calls, metrics, public_streams,
                                                     std::move(logger));
}

}  // namespace gpuaas::rpc
