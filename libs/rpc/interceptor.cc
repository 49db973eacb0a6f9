#include "libs/rpc/interceptor.h"

#include <atomic>
#include <chrono>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "libs/rpc/handler.h"
#include "libs/rpc/status.h"

namespace gpuaas::rpc {
namespace {

class CallLogInterceptor final : public grpc::experimental::Interceptor {
 public:
  CallLogInterceptor(grpc::experimental::ServerRpcInfo& info, CallRegistry& calls,
                     RpcMetrics& metrics, spdlog::logger& logger)
      : ctx_(*info.server_context()),
        method_(info.method() != nullptr ? info.method() : "/unknown/unknown"),
        calls_(calls),
        metrics_(metrics),
        logger_(logger),
        start_(std::chrono::steady_clock::now()) {
    calls_.Begin(ctx_, method_);
    metrics_.CallStarted();
  }

  ~CallLogInterceptor() override {
    // Only reached without a status when the call died before its handler answered. The
    // context is being destroyed around us, so only its address may be used now.
    if (!done_.exchange(true)) {
      End(grpc::StatusCode::CANCELLED, /*context_alive=*/false);
    }
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS) &&
        !done_.exchange(true)) {
      End(EffectiveCode(methods->GetSendStatus().error_code()), /*context_alive=*/true);
    }
    methods->Proceed();
  }

 private:
  // A status sent after the client gave up never reaches it; report what the client saw, as
  // far as the server can tell (a cancellation may not have arrived yet).
  grpc::StatusCode EffectiveCode(grpc::StatusCode sent) const {
    if (ctx_.deadline() <= std::chrono::system_clock::now()) {
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    }
    return ctx_.IsCancelled() ? grpc::StatusCode::CANCELLED : sent;
  }

  void End(grpc::StatusCode code, bool context_alive) {
    // Monotonic: a wall-clock step must not produce negative or huge latencies.
    absl::Duration latency = absl::FromChrono(std::chrono::steady_clock::now() - start_);
    std::string principal = calls_.End(ctx_);
    // Recorded before it leaves the in-flight gauge, so a scrape that sees no call in flight
    // has every finished call counted.
    metrics_.Record(method_, code, latency);
    metrics_.CallEnded();
    if (logger_.should_log(spdlog::level::info)) {
      logger_.info("method={} principal={} code={} ms={:.3f} peer={}", method_,
                   principal.empty() ? "-" : principal, StatusCodeName(code),
                   absl::ToDoubleMilliseconds(latency),
                   context_alive ? PeerAddress(ctx_.peer()) : "-");
    }
  }

  const grpc::ServerContextBase& ctx_;
  const char* method_;
  CallRegistry& calls_;
  RpcMetrics& metrics_;
  spdlog::logger& logger_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<bool> done_{false};
};

class CallLogInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  CallLogInterceptorFactory(CallRegistry& calls, RpcMetrics& metrics,
                            std::shared_ptr<spdlog::logger> logger)
      : calls_(calls), metrics_(metrics), logger_(std::move(logger)) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new CallLogInterceptor(*info, calls_, metrics_, *logger_);
  }

 private:
  CallRegistry& calls_;
  RpcMetrics& metrics_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewCallLogInterceptorFactory(
    CallRegistry& calls, RpcMetrics& metrics, std::shared_ptr<spdlog::logger> logger) {
  return std::make_unique<CallLogInterceptorFactory>(calls, metrics, std::move(logger));
}

}  // namespace gpuaas::rpc
