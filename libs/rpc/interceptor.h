// The server interceptor behind the per-call log line and the RPC metrics. It sees every call
// the server handles, health checks and reflection included, and writes one line when the
// call ends: method, principal, status code, latency and peer. A streaming call gets one line
// too, when it closes, with its whole duration. It never logs metadata, so no token or secret
// can reach the log.
#pragma once

#include <grpcpp/support/server_interceptor.h>
#include <spdlog/logger.h>

#include <memory>

#include "libs/common/slot_limiter.h"
#include "libs/rpc/call_registry.h"
#include "libs/rpc/metrics.h"

namespace gpuaas::rpc {

// Also the gate on streams that need no token (Health/Watch, reflection): each takes a slot of
// `public_streams` keyed by the peer's address for its life, and one that gets none is ended
// at once with the limiter's RESOURCE_EXHAUSTED, before its handler holds anything.
//
// `calls`, `metrics` and `public_streams` must outlive the server the factory is installed on.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewCallLogInterceptorFactory(
    CallRegistry& calls, RpcMetrics& metrics, SlotLimiter& public_streams,
    std::shared_ptr<spdlog::logger> logger);

}  // namespace gpuaas::rpc
