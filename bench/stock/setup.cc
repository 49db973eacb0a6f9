// The setup steps the subcommands share.
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/stock/commands.h"
#include "libs/common/status_macros.h"

namespace gpuaas::stock::bench {

absl::StatusOr<double> RegisterPool(BenchClient& client, const NodePool& pool) {
  const auto start = std::chrono::steady_clock::now();
  for (int32_t i = 0; i < pool.count; ++i) {
    pb::Node n;
    n.set_node_id(absl::StrFormat("%s-%04d", pool.prefix, i));
    n.set_hostname(n.node_id());
    n.set_cpu("128");
    n.set_memory("1Ti");
    n.set_disk("8Ti");
    n.set_agent_version("stock-bench");
    for (int g = 0; g < 8; ++g) {
      pb::Gpu* gpu = n.add_gpus();
      gpu->set_uuid(absl::StrCat("GPU-", n.node_id(), "-", g));
      gpu->set_model(pool.model);
      gpu->set_memory_mib(81920);
      gpu->set_healthy(true);
    }
    GPUAAS_RETURN_IF_ERROR(client.RegisterNode(n));
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

pb::Spec OneGpuSpec(const std::string& name, const std::string& model) {
  pb::Spec s;
  s.set_spec_name(name);
  s.set_gpu_type(model);
  s.set_gpu_num(1);
  s.set_cpu("8");
  s.set_memory("32Gi");
  s.set_disk("100Gi");
  s.set_description("stock_bench");
  s.mutable_price()->set_micros_per_hour(1'000'000);
  s.mutable_price()->set_currency("USD");
  return s;
}

absl::Status EnsureStocks(BenchClient& client, const std::string& spec, int64_t want) {
  GPUAAS_ASSIGN_OR_RETURN(pb::StockCount count, client.Summary(spec));
  if (count.total() >= want) return absl::OkStatus();
  pb::CreateStocksRequest req;
  req.set_spec_name(spec);
  req.set_number(static_cast<int32_t>(want - count.total()));
  pb::CreateStocksResponse out;
  absl::Status s = FromGrpc(client.stock().CreateStocks(client.NewContext().get(), req, &out),
                            absl::StrCat("CreateStocks ", spec));
  if (absl::IsResourceExhausted(s)) return absl::FailedPreconditionError(s.message());
  return s;
}

nlohmann::json SummaryJson(const gpuaas::bench::LatencySummary& s) {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [code, n] : s.errors) errors[code] = n;
  return {{"completed", s.completed},
          {"ok", s.ok},
          {"errors", errors},
          {"latency_ms",
           {{"p50", s.p50_ms},
            {"p90", s.p90_ms},
            {"p99", s.p99_ms},
            {"p999", s.p999_ms},
            {"max", s.max_ms},
            {"mean", s.mean_ms}}}};
}

}  // namespace gpuaas::stock::bench
