// `list`: the first page of ListStocks at a fixed rate, open loop (bench/loadgen's driver and
// recorder: latency from each call's scheduled send time), over a table of at least
// `min_stocks` stocks.
#include <atomic>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/loadgen/open_loop.h"
#include "bench/loadgen/report.h"
#include "bench/stock/commands.h"
#include "libs/client/call_context.h"
#include "libs/common/status_macros.h"

namespace gpuaas::stock::bench {

absl::StatusOr<nlohmann::json> RunList(BenchClient& client, const ListOptions& o) {
  GPUAAS_ASSIGN_OR_RETURN(int64_t total, client.TotalStocks());
  if (total < o.min_stocks) {
    GPUAAS_RETURN_IF_ERROR(RegisterPool(client, o.nodes).status());
    const std::string spec = absl::StrCat("sb.list.", o.nodes.prefix, ".1x");
    GPUAAS_RETURN_IF_ERROR(client.EnsureSpec(OneGpuSpec(spec, o.nodes.model)));
    GPUAAS_ASSIGN_OR_RETURN(pb::StockCount own, client.Summary(spec));
    GPUAAS_RETURN_IF_ERROR(EnsureStocks(client, spec, own.total() + o.min_stocks - total));
    GPUAAS_ASSIGN_OR_RETURN(total, client.TotalStocks());
  }
  std::cerr << absl::StrFormat("%d stocks; ListStocks(page_size %d%s) at %.0f/s for %s\n", total,
                               o.page_size, o.spec.empty() ? "" : ", spec " + o.spec, o.rate,
                               absl::FormatDuration(o.duration));

  auto req = std::make_shared<pb::ListStocksRequest>();
  req->set_page_size(o.page_size);
  req->set_spec_name(o.spec);
  client::CallContext call;
  call.set_timeout(absl::Seconds(5)).set_bearer_token(client.Token());
  auto next = std::make_shared<std::atomic<uint64_t>>(0);
  gpuaas::bench::Invoker invoke = [&client, req, call,
                                   next](std::function<void(grpc::Status)> done) {
    std::shared_ptr<grpc::ClientContext> ctx = call.NewClientContext();
    auto resp = std::make_shared<pb::ListStocksResponse>();
    const int channel = static_cast<int>(next->fetch_add(1) % client.channels());
    // The context and response die before `done` runs (see bench/loadgen/methods.cc).
    client.stock(channel).async()->ListStocks(
        ctx.get(), req.get(), resp.get(),
        [ctx, resp, done = std::move(done)](grpc::Status s) mutable {
          ctx.reset();
          resp.reset();
          done(std::move(s));
        });
  };
  gpuaas::bench::Report report;
  report.method = "ListStocks";
  report.addr = client.stock_address();
  report.options = {
      .rate = o.rate, .duration = o.duration, .warmup = o.warmup, .max_in_flight = o.max_in_flight};
  report.connections = client.channels();
  gpuaas::bench::LatencyRecorder recorder;
  report.run = gpuaas::bench::RunOpenLoop(invoke, report.options, recorder);
  report.latency = recorder.Summarize();
  std::cerr << gpuaas::bench::ReportText(report) << "(budget p99 < 5 ms)\n";
  nlohmann::json out = gpuaas::bench::ReportJson(report);
  out["bench"] = "list";
  out["stocks"] = total;
  out["page_size"] = o.page_size;
  return out;
}

}  // namespace gpuaas::stock::bench
