// The data plane's Prometheus series:
//   gpuaas_s3_requests_total{operation,code}   counter; code is the HTTP status
//   gpuaas_s3_bytes_total{direction}           counter; payload bytes "in" and "out"
//   gpuaas_s3_latency_seconds{operation}       histogram, request start to last byte
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <string_view>

#include "absl/time/time.h"

namespace gpuaas::storage::s3 {

class S3Metrics final {
 public:
  // `registry` outlives this object.
  explicit S3Metrics(prometheus::Registry& registry);
  // Thread-safe.
  void Record(std::string_view operation, int http_status, int64_t bytes_in, int64_t bytes_out,
              absl::Duration latency);

 private:
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Counter>& bytes_;
  prometheus::Counter& bytes_in_;
  prometheus::Counter& bytes_out_;
};

}  // namespace gpuaas::storage::s3
