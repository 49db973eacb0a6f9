#include "libs/rpc/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace gpuaas::rpc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kLabels[] = R"(service="gpuaas.stock.v1.StockService",method="ClaimStock")";

std::string Line(absl::string_view metric, absl::string_view extra, absl::string_view value) {
  return absl::StrCat(metric, "{", kLabels, extra, "} ", value, "\n");
}

TEST(RpcMetricsTest, HistogramBucketsAreCumulativeWithInfAndSum) {
  RpcMetrics metrics;
  metrics.Record("/gpuaas.stock.v1.StockService/ClaimStock", grpc::StatusCode::OK,
                 absl::Microseconds(300));
  metrics.Record("/gpuaas.stock.v1.StockService/ClaimStock", grpc::StatusCode::NOT_FOUND,
                 absl::Milliseconds(300));
  metrics.Record("/gpuaas.stock.v1.StockService/ClaimStock", grpc::StatusCode::NOT_FOUND,
                 absl::Seconds(20));
  std::string text = metrics.Render();

  EXPECT_THAT(text, HasSubstr(Line("gpuaas_rpc_requests_total", "", "3")));
  EXPECT_THAT(text, HasSubstr(Line("gpuaas_rpc_errors_total", R"(,code="NOT_FOUND")", "2")));
  EXPECT_THAT(text, HasSubstr(Line("gpuaas_rpc_latency_seconds_bucket", R"(,le="0.0005")", "1")));
  EXPECT_THAT(text, HasSubstr(Line("gpuaas_rpc_latency_seconds_bucket", R"(,le="0.25")", "1")));
  EXPECT_THAT(text, HasSubstr(Line("gpuaas_rpc_latency_seconds_bucket", R"(,le="0.5")", "2")));
  EXPECT_THAT(text, HasSubstr(Line("gpuaas_rpc_latency_seconds_bucket", R"(,le="10")", "2")));
  EXPECT_THAT(text, HasSubstr(Line("gpuaas_rpc_latency_seconds_bucket", R"(,le="+Inf")", "3")));
  EXPECT_THAT(text, HasSubstr(Line("gpuaas_rpc_latency_seconds_sum", "", "20.300300")));
  EXPECT_THAT(text, HasSubstr(Line("gpuaas_rpc_latency_seconds_count", "", "3")));
  EXPECT_THAT(text, Not(HasSubstr(R"(code="OK")")));
}

TEST(RpcMetricsTest, InFlightGaugeFollowsStartAndEnd) {
  RpcMetrics metrics;
  metrics.CallStarted();
  metrics.CallStarted();
  metrics.CallEnded();
  EXPECT_THAT(metrics.Render(), HasSubstr("gpuaas_rpc_in_flight 1\n"));
}

TEST(RpcMetricsTest, LabelValuesAreEscaped) {
  RpcMetrics metrics;
  metrics.Record("/odd\"svc/m\\x", grpc::StatusCode::OK, absl::Milliseconds(1));
  EXPECT_THAT(metrics.Render(),
              HasSubstr(R"(gpuaas_rpc_requests_total{service="odd\"svc",method="m\\x"} 1)"));
}

TEST(RpcMetricsTest, ProcessMetricsArePresent) {
  std::string text = RenderProcessMetrics();
  EXPECT_THAT(text, HasSubstr("# TYPE process_resident_memory_bytes gauge"));
  EXPECT_THAT(text, HasSubstr("process_cpu_seconds_total "));
  EXPECT_THAT(text, HasSubstr("process_open_fds "));
  EXPECT_THAT(text, Not(HasSubstr("process_threads 0\n")));
}

}  // namespace
}  // namespace gpuaas::rpc
