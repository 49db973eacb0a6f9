// `claim`: `claimers` threads, each looping ClaimStock (a new instance id every time) then
// ReleaseStock. Without a rate they loop as fast as answers come (a closed loop: latency is then
// `claimers` / throughput, so this measures the throughput that much concurrency sustains). With
// a rate, claims are due on a fixed schedule spread over the claimers (at most `claimers` in
// flight) and latency runs from the due time, as bench/loadgen measures. Calls due in the
// warm-up are not recorded.
#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/loadgen/latency_recorder.h"
#include "bench/stock/commands.h"
#include "libs/common/status_macros.h"

namespace gpuaas::stock::bench {

absl::StatusOr<nlohmann::json> RunClaim(BenchClient& client, const ClaimOptions& o) {
  GPUAAS_ASSIGN_OR_RETURN(double register_s, RegisterPool(client, o.nodes));
  const std::string spec = absl::StrCat("sb.claim.", o.nodes.prefix, ".1x");
  GPUAAS_RETURN_IF_ERROR(client.EnsureSpec(OneGpuSpec(spec, o.nodes.model)));
  GPUAAS_RETURN_IF_ERROR(EnsureStocks(client, spec, o.stocks));
  GPUAAS_ASSIGN_OR_RETURN(pb::StockCount before, client.Summary(spec));
  std::cerr << absl::StrFormat(
      "%d nodes (registered in %.1f s), spec %s: %d available, %d claimed; %d claimers for %s, "
      "%s\n",
      o.nodes.count, register_s, spec, before.available(), before.claimed(), o.claimers,
      absl::FormatDuration(o.duration),
      o.rate > 0 ? absl::StrFormat("%.0f claims/s due", o.rate) : "closed loop");

  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const Clock::time_point measure_from = start + absl::ToChronoNanoseconds(o.warmup);
  const Clock::time_point end = measure_from + absl::ToChronoNanoseconds(o.duration);
  const std::string run_id = absl::StrCat(absl::ToUnixMillis(absl::Now()));
  gpuaas::bench::LatencyRecorder claims, releases;
  std::atomic<int64_t> cycles{0};
  std::vector<std::thread> threads;
  for (int32_t w = 0; w < o.claimers; ++w) {
    threads.emplace_back([&, w] {
      for (int64_t n = 0;; ++n) {
        Clock::time_point t0 = Clock::now();
        if (o.rate > 0) {
          // Claim n of claimer w is the (n * claimers + w)-th of the whole schedule.
          const Clock::time_point due =
              start + std::chrono::nanoseconds(static_cast<int64_t>(
                          1e9 * static_cast<double>(n * o.claimers + w) / o.rate));
          std::this_thread::sleep_until(due);
          t0 = due;
        }
        if (t0 >= end) return;
        const bool measured = t0 >= measure_from;
        pb::ClaimStockRequest claim;
        claim.set_spec_name(spec);
        claim.set_instance_id(absl::StrCat("sb-", run_id, "-", w, "-", n));
        pb::Stock stock;
        grpc::Status cs = client.stock().ClaimStock(client.NewContext().get(), claim, &stock);
        const Clock::time_point t1 = Clock::now();
        if (measured) claims.Record(cs.error_code(), absl::FromChrono(t1 - t0));
        if (!cs.ok()) continue;
        pb::ReleaseStockRequest release;
        release.set_instance_id(claim.instance_id());
        pb::ReleaseStockResponse released;
        grpc::Status rs =
            client.stock().ReleaseStock(client.NewContext().get(), release, &released);
        if (measured) releases.Record(rs.error_code(), absl::FromChrono(Clock::now() - t1));
        if (measured) ++cycles;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double window_s = absl::ToDoubleSeconds(o.duration);
  const gpuaas::bench::LatencySummary c = claims.Summarize();
  const gpuaas::bench::LatencySummary r = releases.Summarize();
  GPUAAS_ASSIGN_OR_RETURN(pb::StockCount after, client.Summary(spec));
  std::cerr << absl::StrFormat(
      "ClaimStock: %d ok, %d errors, %.0f claims/s; p50 %.2f p90 %.2f p99 %.2f max %.2f ms "
      "(budget p99 < 10 ms)\nReleaseStock: p50 %.2f p99 %.2f max %.2f ms\n"
      "after: %d available, %d claimed\n",
      c.ok, c.completed - c.ok, c.ok / window_s, c.p50_ms, c.p90_ms, c.p99_ms, c.max_ms, r.p50_ms,
      r.p99_ms, r.max_ms, after.available(), after.claimed());
  return nlohmann::json{{"bench", "claim"},
                        {"claimers", o.claimers},
                        {"rate", o.rate},
                        {"stocks", before.available()},
                        {"duration_s", window_s},
                        {"claims_per_s", c.ok / window_s},
                        {"cycles_per_s", static_cast<double>(cycles.load()) / window_s},
                        {"claim", SummaryJson(c)},
                        {"release", SummaryJson(r)},
                        {"left_claimed", after.claimed()}};
}

}  // namespace gpuaas::stock::bench
