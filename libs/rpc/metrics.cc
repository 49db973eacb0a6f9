#include "libs/rpc/metrics.h"

#include <utility>

#include "absl/hash/hash.h"
#include "libs/rpc/status.h"

namespace gpuaas::rpc {
namespace {

// gRPC defines codes 0 (OK) to 16 (UNAUTHENTICATED); any other value is one more slot,
// matching StatusCodeName's single "UNKNOWN_CODE" label.
constexpr int kDefinedCodes = static_cast<int>(grpc::StatusCode::UNAUTHENTICATED) + 1;
constexpr int kCodeSlots = kDefinedCodes + 1;

int CodeSlot(grpc::StatusCode code) {
  int value = static_cast<int>(code);
  return value >= 0 && value < kDefinedCodes ? value : kDefinedCodes;
}

prometheus::Labels MethodLabels(std::string_view full_method) {
  if (!full_method.empty() && full_method.front() == '/') {
    full_method.remove_prefix(1);
  }
  size_t slash = full_method.find('/');
  if (slash == std::string_view::npos) {
    return {{"service", ""}, {"method", std::string(full_method)}};
  }
  return {{"service", std::string(full_method.substr(0, slash))},
          {"method", std::string(full_method.substr(slash + 1))}};
}

}  // namespace

// The references point into families the registry owns; prometheus-cpp never moves them.
struct RpcMetrics::MethodSeries {
  const std::string full_method;
  const prometheus::Labels labels;  // service, method
  prometheus::Counter& requests;
  prometheus::Histogram& latency;
  // Filled on the first error with each code, so codes never seen export no series.
  std::array<std::atomic<prometheus::Counter*>, kCodeSlots> errors{};
};

RpcMetrics::RpcMetrics(prometheus::Registry& registry)
    : requests_(prometheus::BuildCounter()
                    .Name("gpuaas_rpc_requests_total")
                    .Help("RPCs completed (a stream when it ends), by method.")
                    .Register(registry)),
      errors_(prometheus::BuildCounter()
                  .Name("gpuaas_rpc_errors_total")
                  .Help("RPCs that ended with a non-OK status, by code.")
                  .Register(registry)),
      latency_(prometheus::BuildHistogram()
                   .Name("gpuaas_rpc_latency_seconds")
                   .Help("Unary RPCs: time from call start to status sent.")
                   .Register(registry)),
      in_flight_(prometheus::BuildGauge()
                     .Name("gpuaas_rpc_in_flight")
                     .Help("Unary RPCs started and not yet finished.")
                     .Register(registry)
                     .Add({})),
      open_streams_(prometheus::BuildGauge()
                        .Name("gpuaas_rpc_open_streams")
                        .Help("Streaming RPCs open.")
                        .Register(registry)
                        .Add({})) {}

RpcMetrics::~RpcMetrics() = default;

void RpcMetrics::Record(std::string_view full_method, grpc::StatusCode code,
                        absl::Duration latency) {
  MethodSeries& series = SeriesFor(full_method);
  series.latency.Observe(absl::ToDoubleSeconds(latency));
  CountEnd(series, code);
}

void RpcMetrics::RecordStream(std::string_view full_method, grpc::StatusCode code) {
  CountEnd(SeriesFor(full_method), code);
}

void RpcMetrics::CountEnd(MethodSeries& series, grpc::StatusCode code) {
  series.requests.Increment();
  if (code != grpc::StatusCode::OK) {
    ErrorCounter(series, code).Increment();
  }
}

RpcMetrics::MethodSeries& RpcMetrics::SeriesFor(std::string_view full_method) {
  size_t hash = absl::Hash<std::string_view>{}(full_method);
  if (MethodSeries* series = FindCached(full_method, hash); series != nullptr) {
    return *series;
  }
  return AddSeries(full_method, hash);
}

RpcMetrics::MethodSeries* RpcMetrics::FindCached(std::string_view full_method, size_t hash) const {
  for (size_t i = 0; i < kCacheSlots; ++i) {
    // Acquire pairs with the release in AddSeries: a series seen here is fully built.
    MethodSeries* series = cache_[(hash + i) % kCacheSlots].load(std::memory_order_acquire);
    if (series == nullptr) {  // slots fill in probe order, so the method is not cached
      return nullptr;
    }
    if (series->full_method == full_method) {
      return series;
    }
  }
  return nullptr;
}

RpcMetrics::MethodSeries& RpcMetrics::AddSeries(std::string_view full_method, size_t hash) {
  // Debian's abseil has its own string_view type, which the map's hash takes.
  absl::string_view key(full_method.data(), full_method.size());
  absl::MutexLock lock(&mu_);
  std::unique_ptr<MethodSeries>& series = methods_[key];
  if (series != nullptr) {  // added by another thread, or beyond the cache
    return *series;
  }
  prometheus::Labels labels = MethodLabels(full_method);
  prometheus::Counter& requests = requests_.Add(labels);
  prometheus::Histogram& latency = latency_.Add(
      labels,
      prometheus::Histogram::BucketBoundaries(kLatencyBuckets.begin(), kLatencyBuckets.end()));
  series.reset(new MethodSeries{std::string(full_method), std::move(labels), requests, latency});
  if (cached_ < kCacheSlots / 2) {  // half full at most keeps probe sequences short
    size_t slot = hash % kCacheSlots;
    while (cache_[slot].load(std::memory_order_relaxed) != nullptr) {
      slot = (slot + 1) % kCacheSlots;
    }
    cache_[slot].store(series.get(), std::memory_order_release);
    ++cached_;
  }
  return *series;
}

prometheus::Counter& RpcMetrics::ErrorCounter(MethodSeries& series, grpc::StatusCode code) {
  std::atomic<prometheus::Counter*>& slot = series.errors[CodeSlot(code)];
  prometheus::Counter* counter = slot.load(std::memory_order_acquire);
  if (counter == nullptr) {
    // Family::Add returns the existing counter when two threads race here.
    prometheus::Labels labels = series.labels;
    labels.emplace("code", StatusCodeName(code));
    counter = &errors_.Add(labels);
    slot.store(counter, std::memory_order_release);
  }
  return *counter;
}

}  // namespace gpuaas::rpc
