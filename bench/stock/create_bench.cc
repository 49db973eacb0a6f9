// `create`: one CreateStocks of `slots` stocks, timed, then a DeleteStocks of as many (timed
// too), `repeats` times, on a pool of simulated nodes with room for them.
#include <chrono>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/loadgen/latency_recorder.h"
#include "bench/stock/commands.h"
#include "libs/common/status_macros.h"

namespace gpuaas::stock::bench {
namespace {

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// Deletes every available stock of `spec` a run before may have left.
absl::Status DeleteAll(BenchClient& client, const std::string& spec) {
  for (;;) {
    pb::DeleteStocksRequest req;
    req.set_spec_name(spec);
    req.set_number(10000);
    pb::DeleteStocksResponse out;
    GPUAAS_RETURN_IF_ERROR(
        FromGrpc(client.stock().DeleteStocks(client.NewContext().get(), req, &out),
                 absl::StrCat("DeleteStocks ", spec)));
    if (out.deleted() == 0) return absl::OkStatus();
  }
}

}  // namespace

absl::StatusOr<nlohmann::json> RunCreate(BenchClient& client, const CreateOptions& o) {
  GPUAAS_ASSIGN_OR_RETURN(double register_s, RegisterPool(client, o.nodes));
  std::cerr << absl::StrFormat("registered %d nodes of 8 x %s in %.1f s (%.0f/s)\n", o.nodes.count,
                               o.nodes.model, register_s, o.nodes.count / register_s);
  const std::string spec = absl::StrCat("sb.create.", o.nodes.prefix, ".1x");
  GPUAAS_RETURN_IF_ERROR(client.EnsureSpec(OneGpuSpec(spec, o.nodes.model)));
  GPUAAS_RETURN_IF_ERROR(DeleteAll(client, spec));

  gpuaas::bench::LatencyRecorder creates, deletes;
  nlohmann::json runs = nlohmann::json::array();
  const std::string run_id = absl::StrCat(absl::ToUnixMillis(absl::Now()));
  for (int32_t r = 0; r < o.repeats; ++r) {
    pb::CreateStocksRequest create;
    create.set_spec_name(spec);
    create.set_number(o.slots);
    create.set_operation_id(absl::StrCat("sb-create-", run_id, "-", r));
    pb::CreateStocksResponse created;
    auto t0 = std::chrono::steady_clock::now();
    grpc::Status cs = client.stock().CreateStocks(client.NewContext().get(), create, &created);
    const double create_ms = Ms(std::chrono::steady_clock::now() - t0);
    creates.Record(cs.error_code(), absl::Milliseconds(create_ms));
    GPUAAS_RETURN_IF_ERROR(FromGrpc(cs, absl::StrCat("CreateStocks ", spec)));
    if (created.placed() != o.slots) {
      return absl::FailedPreconditionError(
          absl::StrCat("placed ", created.placed(), " of ", o.slots));
    }

    pb::DeleteStocksRequest del;
    del.set_spec_name(spec);
    del.set_number(o.slots);
    del.set_operation_id(absl::StrCat("sb-delete-", run_id, "-", r));
    pb::DeleteStocksResponse deleted;
    t0 = std::chrono::steady_clock::now();
    grpc::Status ds = client.stock().DeleteStocks(client.NewContext().get(), del, &deleted);
    const double delete_ms = Ms(std::chrono::steady_clock::now() - t0);
    deletes.Record(ds.error_code(), absl::Milliseconds(delete_ms));
    GPUAAS_RETURN_IF_ERROR(FromGrpc(ds, absl::StrCat("DeleteStocks ", spec)));
    std::cerr << absl::StrFormat("run %d: CreateStocks(%d) %.1f ms, DeleteStocks(%d) %.1f ms\n", r,
                                 o.slots, create_ms, deleted.deleted(), delete_ms);
    runs.push_back({{"create_ms", create_ms}, {"delete_ms", delete_ms}});
  }
  const gpuaas::bench::LatencySummary c = creates.Summarize();
  std::cerr << absl::StrFormat(
      "CreateStocks of %d slots: p50 %.1f ms, max %.1f ms (budget < 1 s)\n", o.slots, c.p50_ms,
      c.max_ms);
  return nlohmann::json{{"bench", "create"},        {"nodes", o.nodes.count},
                        {"model", o.nodes.model},   {"register_nodes_s", register_s},
                        {"slots", o.slots},         {"runs", runs},
                        {"create", SummaryJson(c)}, {"delete", SummaryJson(deletes.Summarize())}};
}

}  // namespace gpuaas::stock::bench
