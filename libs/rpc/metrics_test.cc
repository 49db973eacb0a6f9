// RpcMetrics, ProcessMetrics and MetricsEndpoint together, read back the way Prometheus reads
// them: an HTTP scrape of /metrics on a free port.
#include "libs/rpc/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <memory>
#include <thread>
#include <vector>

#include "libs/rpc/metrics_endpoint.h"
#include "libs/rpc/metrics_scrape_test_util.h"
#include "libs/rpc/process_metrics.h"

namespace gpuaas::rpc {
namespace {

using test::Exposition;
using test::MetricLabels;
using ::testing::HasSubstr;
using ::testing::Optional;

constexpr std::string_view kClaimStock = "/gpuaas.stock.v1.StockService/ClaimStock";

MetricLabels ClaimStockLabels(MetricLabels extra = {}) {
  extra.emplace("service", "gpuaas.stock.v1.StockService");
  extra.emplace("method", "ClaimStock");
  return extra;
}

class RpcMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
        MetricsEndpoint::Start("127.0.0.1:0", {registry_, std::make_shared<ProcessMetrics>()});
    ASSERT_TRUE(endpoint.ok()) << endpoint.status();
    endpoint_ = *std::move(endpoint);
    ASSERT_GT(endpoint_->port(), 0);
  }

  Exposition Scrape() const {
    absl::StatusOr<Exposition> exposition = test::ScrapeExposition(endpoint_->port());
    EXPECT_TRUE(exposition.ok()) << exposition.status();
    return exposition.value_or(Exposition());
  }

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  RpcMetrics metrics_{*registry_};
  std::unique_ptr<MetricsEndpoint> endpoint_;
};

TEST_F(RpcMetricsTest, CountsRequestsAndErrorsByCode) {
  metrics_.Record(kClaimStock, grpc::StatusCode::OK, absl::Milliseconds(1));
  metrics_.Record(kClaimStock, grpc::StatusCode::NOT_FOUND, absl::Milliseconds(1));
  metrics_.Record(kClaimStock, grpc::StatusCode::NOT_FOUND, absl::Milliseconds(1));
  metrics_.Record(kClaimStock, static_cast<grpc::StatusCode>(42), absl::Milliseconds(1));
  Exposition e = Scrape();

  EXPECT_EQ(e.Type("gpuaas_rpc_requests_total"), "counter");
  EXPECT_EQ(e.Type("gpuaas_rpc_errors_total"), "counter");
  EXPECT_THAT(e.Value("gpuaas_rpc_requests_total", ClaimStockLabels()), Optional(4.0));
  EXPECT_THAT(e.Value("gpuaas_rpc_errors_total", ClaimStockLabels({{"code", "NOT_FOUND"}})),
              Optional(2.0));
  EXPECT_THAT(e.Value("gpuaas_rpc_errors_total", ClaimStockLabels({{"code", "UNKNOWN_CODE"}})),
              Optional(1.0));
  // OK is not an error, and codes never seen export nothing.
  EXPECT_EQ(e.All("gpuaas_rpc_errors_total").size(), 2u);
}

TEST_F(RpcMetricsTest, HistogramBucketsAreCumulativeWithInfAndSum) {
  metrics_.Record(kClaimStock, grpc::StatusCode::OK, absl::Microseconds(300));
  metrics_.Record(kClaimStock, grpc::StatusCode::OK, absl::Milliseconds(300));
  metrics_.Record(kClaimStock, grpc::StatusCode::OK, absl::Seconds(20));
  Exposition e = Scrape();

  constexpr char kLatency[] = "gpuaas_rpc_latency_seconds";
  EXPECT_EQ(e.Type(kLatency), "histogram");
  EXPECT_THAT(e.Bucket(kLatency, ClaimStockLabels(), 0.0005), Optional(1.0));
  EXPECT_THAT(e.Bucket(kLatency, ClaimStockLabels(), 0.25), Optional(1.0));
  EXPECT_THAT(e.Bucket(kLatency, ClaimStockLabels(), 0.5), Optional(2.0));
  EXPECT_THAT(e.Bucket(kLatency, ClaimStockLabels(), 10), Optional(2.0));
  EXPECT_THAT(e.Bucket(kLatency, ClaimStockLabels(), INFINITY), Optional(3.0));
  std::optional<double> sum = e.Value("gpuaas_rpc_latency_seconds_sum", ClaimStockLabels());
  ASSERT_TRUE(sum.has_value());
  EXPECT_NEAR(*sum, 20.3003, 1e-9);
  EXPECT_THAT(e.Value("gpuaas_rpc_latency_seconds_count", ClaimStockLabels()), Optional(3.0));
}

TEST_F(RpcMetricsTest, HistogramHasExactlyTheConfiguredBuckets) {
  metrics_.Record(kClaimStock, grpc::StatusCode::OK, absl::Milliseconds(1));
  Exposition e = Scrape();
  for (double le : kLatencyBuckets) {
    EXPECT_TRUE(e.Bucket("gpuaas_rpc_latency_seconds", ClaimStockLabels(), le).has_value())
        << "le=" << le;
  }
  EXPECT_EQ(e.All("gpuaas_rpc_latency_seconds_bucket").size(), kLatencyBuckets.size() + 1);
}

TEST_F(RpcMetricsTest, InFlightGaugeFollowsStartAndEnd) {
  metrics_.CallStarted();
  metrics_.CallStarted();
  metrics_.CallEnded();
  Exposition e = Scrape();
  EXPECT_EQ(e.Type("gpuaas_rpc_in_flight"), "gauge");
  EXPECT_THAT(e.Value("gpuaas_rpc_in_flight"), Optional(1.0));
}

TEST_F(RpcMetricsTest, LabelValuesAreEscaped) {
  metrics_.Record("/odd\"svc/m\\x", grpc::StatusCode::OK, absl::Milliseconds(1));
  absl::StatusOr<std::string> body = test::ScrapeMetrics(endpoint_->port());
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr(R"(service="odd\"svc")"));
  EXPECT_THAT(*body, HasSubstr(R"(method="m\\x")"));
  absl::StatusOr<Exposition> e = Exposition::Parse(*body);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_THAT(e->Value("gpuaas_rpc_requests_total", {{"service", "odd\"svc"}, {"method", "m\\x"}}),
              Optional(1.0));
}

// The per-method series are created on first use from many threads at once; no call may be
// lost or counted on a second, duplicate series.
TEST_F(RpcMetricsTest, ConcurrentFirstCallsShareOneSeries) {
  constexpr int kThreads = 4;
  constexpr int kCallsPerThread = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        metrics_.Record(kClaimStock, grpc::StatusCode::UNAVAILABLE, absl::Milliseconds(1));
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  Exposition e = Scrape();
  EXPECT_THAT(e.Value("gpuaas_rpc_requests_total", ClaimStockLabels()),
              Optional(kThreads * kCallsPerThread));
  EXPECT_THAT(e.Value("gpuaas_rpc_errors_total", ClaimStockLabels({{"code", "UNAVAILABLE"}})),
              Optional(kThreads * kCallsPerThread));
  EXPECT_EQ(e.All("gpuaas_rpc_requests_total").size(), 1u);
}

// More methods than the lock-free cache holds: the rest are found under the lock, each
// still on its own series.
TEST_F(RpcMetricsTest, MethodsBeyondTheCacheAreCountedToo) {
  constexpr int kMethods = 300;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kMethods; ++i) {
      metrics_.Record(absl::StrCat("/gpuaas.test.v1.Many/M", i), grpc::StatusCode::OK,
                      absl::Milliseconds(1));
    }
  }
  Exposition e = Scrape();
  ASSERT_EQ(e.All("gpuaas_rpc_requests_total").size(), static_cast<size_t>(kMethods));
  for (int i = 0; i < kMethods; ++i) {
    EXPECT_THAT(e.Value("gpuaas_rpc_requests_total",
                        {{"service", "gpuaas.test.v1.Many"}, {"method", absl::StrCat("M", i)}}),
                Optional(2.0))
        << i;
  }
}

TEST_F(RpcMetricsTest, ProcessMetricsAreReadAtScrapeTime) {
  Exposition e = Scrape();
  EXPECT_EQ(e.Type("process_resident_memory_bytes"), "gauge");
  EXPECT_EQ(e.Type("process_cpu_seconds_total"), "counter");
  EXPECT_EQ(e.Type("process_open_fds"), "gauge");
  EXPECT_EQ(e.Type("process_threads"), "gauge");
  EXPECT_GT(e.Value("process_resident_memory_bytes").value_or(0), 0);
  EXPECT_GE(e.Value("process_cpu_seconds_total").value_or(-1), 0);
  // The endpoint's own socket and threads are there at least.
  EXPECT_GT(e.Value("process_open_fds").value_or(0), 0);
  EXPECT_GE(e.Value("process_threads").value_or(0), 2);
}

TEST(MetricsEndpointTest, RefusesMalformedAddresses) {
  for (const char* address : {"127.0.0.1", "127.0.0.1:x", "127.0.0.1:70000", "localhost:0", "::1:0",
                              "127.0.0.1:0,127.0.0.1:0", "127.0.0.1:9101s",
                              // Debian's civetweb is built without IPv6.
                              "[::1]:0"}) {
    EXPECT_EQ(MetricsEndpoint::Start(address, {}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << address;
  }
}

TEST(MetricsEndpointTest, PortTakenIsUnavailable) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> first =
      MetricsEndpoint::Start("127.0.0.1:0", {});
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> second =
      MetricsEndpoint::Start(absl::StrCat("127.0.0.1:", (*first)->port()), {});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

TEST(MetricsEndpointTest, StopsServingWhenDestroyed) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start("127.0.0.1:0", {std::make_shared<ProcessMetrics>()});
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  int port = (*endpoint)->port();
  ASSERT_TRUE(test::ScrapeMetrics(port).ok());
  absl::Time before = absl::Now();
  endpoint->reset();
  // civetweb alone notices the stop only after its 2 s poll slice (see ~MetricsEndpoint).
  EXPECT_LT(absl::Now() - before, absl::Seconds(1));
  EXPECT_FALSE(test::ScrapeMetrics(port).ok());
}

}  // namespace
}  // namespace gpuaas::rpc
