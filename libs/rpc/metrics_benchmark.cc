// The per-call cost of RpcMetrics, as the interceptor pays it: in-flight up and down plus one
// Record, for a method already seen (the steady state of a server).
#include <benchmark/benchmark.h>
#include <prometheus/registry.h>

#include "absl/synchronization/mutex.h"
#include "libs/rpc/metrics.h"

namespace gpuaas::rpc {
namespace {

constexpr char kMethod[] = "/gpuaas.auth.v1.AuthService/GetTenant";

void RecordCalls(benchmark::State& state, grpc::StatusCode code) {
  // As rpc::Server does in release builds (see Server::Server).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  static prometheus::Registry* registry = new prometheus::Registry();
  static RpcMetrics* metrics = new RpcMetrics(*registry);  // shared by the benchmark threads
  for (auto _ : state) {
    metrics->CallStarted();
    metrics->CallEnded();
    metrics->Record(kMethod, code, absl::Microseconds(400));
  }
}

void BM_RpcMetrics_RecordOk(benchmark::State& state) { RecordCalls(state, grpc::StatusCode::OK); }
BENCHMARK(BM_RpcMetrics_RecordOk)->Threads(1)->Threads(2);

void BM_RpcMetrics_RecordError(benchmark::State& state) {
  RecordCalls(state, grpc::StatusCode::NOT_FOUND);
}
BENCHMARK(BM_RpcMetrics_RecordError)->Threads(1)->Threads(2);

}  // namespace
}  // namespace gpuaas::rpc
