#include "bench/loadgen/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuaas::bench {

double Report::AchievedRate() const {
  const double secs = absl::ToDoubleSeconds(options.duration);
  return secs > 0 ? static_cast<double>(latency.ok) / secs : 0;
}

std::string ReportText(const Report& r) {
  std::string out = absl::StrFormat(
      "method %s  addr %s  rate %.0f/s  duration %s  warmup %s  max-in-flight %d  connections "
      "%d\n",
      r.method, r.addr, r.options.rate, absl::FormatDuration(r.options.duration),
      absl::FormatDuration(r.options.warmup), r.options.max_in_flight, r.connections);
  absl::StrAppendFormat(&out,
                        "scheduled %d  sent %d  unsent %d  completed %d  ok %d  achieved %.1f/s\n",
                        r.run.scheduled, r.run.sent, r.run.unsent, r.latency.completed,
                        r.latency.ok, r.AchievedRate());
  if (r.latency.errors.empty()) {
    absl::StrAppend(&out, "errors: none\n");
  } else {
    absl::StrAppend(&out, "errors:");
    for (const auto& [code, n] : r.latency.errors) {
      absl::StrAppend(&out, " ", code, "=", n);
    }
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppendFormat(&out,
                        "latency ms (from scheduled send)  p50 %.3f  p90 %.3f  p99 %.3f  p999 %.3f "
                        " max %.3f  mean %.3f\n",
                        r.latency.p50_ms, r.latency.p90_ms, r.latency.p99_ms, r.latency.p999_ms,
                        r.latency.max_ms, r.latency.mean_ms);
  return out;
}

nlohmann::json ReportJson(const Report& r) {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [code, n] : r.latency.errors) {
    errors[code] = n;
  }
  return {
      {"method", r.method},
      {"addr", r.addr},
      {"rate", r.options.rate},
      {"duration_s", absl::ToDoubleSeconds(r.options.duration)},
      {"warmup_s", absl::ToDoubleSeconds(r.options.warmup)},
      {"max_in_flight", r.options.max_in_flight},
      {"connections", r.connections},
      {"scheduled", r.run.scheduled},
      {"sent", r.run.sent},
      {"unsent", r.run.unsent},
      {"completed", r.latency.completed},
      {"ok", r.latency.ok},
      {"errors", errors},
      {"achieved_rate", r.AchievedRate()},
      {"latency_ms",
       {{"p50", r.latency.p50_ms},
        {"p90", r.latency.p90_ms},
        {"p99", r.latency.p99_ms},
        {"p999", r.latency.p999_ms},
        {"max", r.latency.max_ms},
        {"mean", r.latency.mean_ms}}},
  };
}

}  // namespace gpuaas::bench
