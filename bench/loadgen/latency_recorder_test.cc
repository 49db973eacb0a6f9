#include "bench/loadgen/latency_recorder.h"

#include <gtest/gtest.h>

namespace gpuaas::bench {
namespace {

TEST(PercentileTest, NearestRank) {
  std::vector<int64_t> v;
  for (int i = 1; i <= 1000; ++i) {
    v.push_back(i);
  }
  EXPECT_EQ(Percentile(v, 0.5), 500);
  EXPECT_EQ(Percentile(v, 0.9), 900);
  EXPECT_EQ(Percentile(v, 0.99), 990);
  EXPECT_EQ(Percentile(v, 0.999), 999);
  EXPECT_EQ(Percentile(v, 1.0), 1000);
  EXPECT_EQ(Percentile(v, 0.0), 1);
  EXPECT_EQ(Percentile({}, 0.5), 0);
  EXPECT_EQ(Percentile({7}, 0.999), 7);
}

TEST(LatencyRecorderTest, SummarisesCodesAndLatency) {
  LatencyRecorder r;
  for (int i = 1; i <= 100; ++i) {
    r.Record(grpc::StatusCode::OK, absl::Milliseconds(i));
  }
  r.Record(grpc::StatusCode::UNAVAILABLE, absl::Milliseconds(500));
  r.Record(grpc::StatusCode::UNAVAILABLE, absl::Milliseconds(500));
  r.Record(grpc::StatusCode::DEADLINE_EXCEEDED, absl::Seconds(5));
  LatencySummary s = r.Summarize();
  EXPECT_EQ(s.completed, 103);
  EXPECT_EQ(s.ok, 100);
  EXPECT_EQ(s.errors.at("UNAVAILABLE"), 2);
  EXPECT_EQ(s.errors.at("DEADLINE_EXCEEDED"), 1);
  EXPECT_DOUBLE_EQ(s.p50_ms, 52);
  EXPECT_DOUBLE_EQ(s.max_ms, 5000);
}

TEST(LatencyRecorderTest, EmptyIsAllZero) {
  LatencySummary s = LatencyRecorder().Summarize();
  EXPECT_EQ(s.completed, 0);
  EXPECT_EQ(s.p99_ms, 0);
  EXPECT_TRUE(s.errors.empty());
}

}  // namespace
}  // namespace gpuaas::bench
