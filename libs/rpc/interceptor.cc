#include "libs/rpc/interceptor.h"

#include <atomic>
#include <string>
#include <utility>

#include "absl/time/clock.h"
#include "libs/rpc/handler.h"
#include "libs/rpc/status.h"

namespace gpuaas::rpc {
namespace {

class CallLogInterceptor final : public grpc::experimental::Interceptor {
 public:
  CallLogInterceptor(grpc::experimental::ServerRpcInfo& info, CallRegistry& calls,
                     RpcMetrics& metrics, spdlog::logger& logger)
      : ctx_(*info.server_context()),
        method_(info.method()),
        calls_(calls),
        metrics_(metrics),
        logger_(logger),
        start_(absl::Now()) {
    calls_.Begin(ctx_, method_);
    metrics_.CallStarted();
  }

  ~CallLogInterceptor() override {
    // Only reached without a status when the call died before its handler answered.
    if (!done_.exchange(true)) {
      End(grpc::StatusCode::CANCELLED);
    }
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS) &&
        !done_.exchange(true)) {
      End(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  void End(grpc::StatusCode code) {
    absl::Duration latency = absl::Now() - start_;
    std::string principal = calls_.End(ctx_);
    metrics_.CallEnded();
    metrics_.Record(method_, code, latency);
    if (logger_.should_log(spdlog::level::info)) {
      logger_.info("method={} principal={} code={} ms={:.3f} peer={}", method_,
                   principal.empty() ? "-" : principal, StatusCodeName(code),
                   absl::ToDoubleMilliseconds(latency), PeerAddress(ctx_.peer()));
    }
  }

  const grpc::ServerContextBase& ctx_;
  const char* method_;
  CallRegistry& calls_;
  RpcMetrics& metrics_;
  spdlog::logger& logger_;
  absl::Time start_;
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
