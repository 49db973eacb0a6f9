#include "libs/rpc/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libs/rpc/status.h"

namespace gpuaas::rpc {
namespace {

// Label values come from method names today, but escaping keeps the output valid whatever
// a future label carries.
std::string Escape(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::pair<std::string, std::string> SplitMethod(std::string_view full_method) {
  if (!full_method.empty() && full_method.front() == '/') {
    full_method.remove_prefix(1);
  }
  size_t slash = full_method.find('/');
  if (slash == std::string_view::npos) {
    return {"", std::string(full_method)};
  }
  return {std::string(full_method.substr(0, slash)), std::string(full_method.substr(slash + 1))};
}

}  // namespace

void RpcMetrics::Record(std::string_view full_method, grpc::StatusCode code,
                        absl::Duration latency) {
  double seconds = absl::ToDoubleSeconds(latency);
  Key key = SplitMethod(full_method);
  absl::MutexLock lock(&mu_);
  MethodStats& stats = methods_[key];
  ++stats.requests;
  stats.latency_sum += seconds;
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    if (seconds <= kLatencyBuckets[i]) {
      ++stats.buckets[i];
      break;
    }
  }
  if (code != grpc::StatusCode::OK) {
    ++stats.errors[std::string(StatusCodeName(code))];
  }
}

std::string RpcMetrics::Render() const {
  std::string requests =
      "# HELP gpuaas_rpc_requests_total RPCs completed, by method.\n"
      "# TYPE gpuaas_rpc_requests_total counter\n";
  std::string errors =
      "# HELP gpuaas_rpc_errors_total RPCs that ended with a non-OK status, by code.\n"
      "# TYPE gpuaas_rpc_errors_total counter\n";
  std::string latency =
      "# HELP gpuaas_rpc_latency_seconds Time from call start to status sent.\n"
      "# TYPE gpuaas_rpc_latency_seconds histogram\n";
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, stats] : methods_) {
      std::string labels =
          absl::StrCat("service=\"", Escape(key.first), "\",method=\"", Escape(key.second), "\"");
      absl::StrAppend(&requests, "gpuaas_rpc_requests_total{", labels, "} ", stats.requests, "\n");
      for (const auto& [code, count] : stats.errors) {
        absl::StrAppend(&errors, "gpuaas_rpc_errors_total{", labels, ",code=\"", code, "\"} ",
                        count, "\n");
      }
      uint64_t cumulative = 0;
      for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
        cumulative += stats.buckets[i];
        absl::StrAppend(&latency, "gpuaas_rpc_latency_seconds_bucket{", labels, ",le=\"",
                        kLatencyBuckets[i], "\"} ", cumulative, "\n");
      }
      absl::StrAppend(&latency, "gpuaas_rpc_latency_seconds_bucket{", labels, ",le=\"+Inf\"} ",
                      stats.requests, "\n");
      absl::StrAppend(&latency, "gpuaas_rpc_latency_seconds_sum{", labels, "} ",
                      absl::StrFormat("%.6f", stats.latency_sum), "\n");
      absl::StrAppend(&latency, "gpuaas_rpc_latency_seconds_count{", labels, "} ", stats.requests,
                      "\n");
    }
  }
  return absl::StrCat(requests, errors, latency,
                      "# HELP gpuaas_rpc_in_flight RPCs started and not yet finished.\n"
                      "# TYPE gpuaas_rpc_in_flight gauge\n"
                      "gpuaas_rpc_in_flight ",
                      in_flight_.load(std::memory_order_relaxed), "\n");
}

}  // namespace gpuaas::rpc
