#include "bench/loadgen/latency_recorder.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "libs/rpc/status.h"

namespace gpuaas::bench {
namespace {

constexpr double kNsPerMs = 1e6;

}  // namespace

void LatencyRecorder::Record(grpc::StatusCode code, absl::Duration latency) {
  absl::MutexLock lock(&mu_);
  latencies_ns_.push_back(absl::ToInt64Nanoseconds(latency));
  ++codes_[code];
}

int64_t Percentile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) {
    return 0;
  }
  auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

LatencySummary LatencyRecorder::Summarize() const {
  std::vector<int64_t> sorted;
  LatencySummary s;
  {
    absl::MutexLock lock(&mu_);
    sorted = latencies_ns_;
    for (const auto& [code, n] : codes_) {
      if (code == grpc::StatusCode::OK) {
        s.ok = n;
      } else {
        s.errors[std::string(rpc::StatusCodeName(code))] = n;
      }
    }
  }
  std::sort(sorted.begin(), sorted.end());
  s.completed = static_cast<int64_t>(sorted.size());
  auto ms = [](int64_t ns) { return static_cast<double>(ns) / kNsPerMs; };
  s.p50_ms = ms(Percentile(sorted, 0.50));
  s.p90_ms = ms(Percentile(sorted, 0.90));
  s.p99_ms = ms(Percentile(sorted, 0.99));
  s.p999_ms = ms(Percentile(sorted, 0.999));
  s.max_ms = sorted.empty() ? 0 : ms(sorted.back());
  if (!sorted.empty()) {
    long double sum = std::accumulate(sorted.begin(), sorted.end(), 0.0L);
    s.mean_ms = static_cast<double>(sum / sorted.size()) / kNsPerMs;
  }
  return s;
}

}  // namespace gpuaas::bench
