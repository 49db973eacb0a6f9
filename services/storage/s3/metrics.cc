#include "services/storage/s3/metrics.h"

#include <string>

namespace gpuaas::storage::s3 {
namespace {

// Seconds: 1 ms to 10 min, since a 10 GB object takes a while.
const prometheus::Histogram::BucketBoundaries& Buckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600};
  return *buckets;
}

}  // namespace

S3Metrics::S3Metrics(prometheus::Registry& registry)
    : requests_(prometheus::BuildCounter()
                    .Name("gpuaas_s3_requests_total")
                    .Help("S3 requests by operation and HTTP status")
                    .Register(registry)),
      latency_(prometheus::BuildHistogram()
                   .Name("gpuaas_s3_latency_seconds")
                   .Help("S3 request latency, to the last byte of the response")
                   .Register(registry)),
      bytes_(prometheus::BuildCounter()
                 .Name("gpuaas_s3_bytes_total")
                 .Help("S3 payload bytes received (in) and sent (out)")
                 .Register(registry)),
      bytes_in_(bytes_.Add({{"direction", "in"}})),
      bytes_out_(bytes_.Add({{"direction", "out"}})) {}

void S3Metrics::Record(std::string_view operation, int http_status, int64_t bytes_in,
                       int64_t bytes_out, absl::Duration latency) {
  std::string op(operation);
  requests_.Add({{"operation", op}, {"code", std::to_string(http_status)}}).Increment();
  latency_.Add({{"operation", op}}, Buckets()).Observe(absl::ToDoubleSeconds(latency));
  bytes_in_.Increment(static_cast<double>(bytes_in));
  bytes_out_.Increment(static_cast<double>(bytes_out));
}

}  // namespace gpuaas::storage::s3
