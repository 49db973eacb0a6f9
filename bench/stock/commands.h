// stock_bench's subcommands. Each sets up what it needs through the API (simulated nodes under
// its own name prefix and GPU model, so runs of different subcommands never share a node or a
// spec), measures, prints progress and a text summary to stderr, and returns its report as JSON
// for stdout. Errors: whatever a setup call returned (the run stops at the first).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/loadgen/latency_recorder.h"
#include "bench/stock/bench_client.h"
#include "nlohmann/json.hpp"

namespace gpuaas::stock::bench {

// Simulated nodes of 8 GPUs of one model (128 cores, 1 TiB, 8 TiB disk), named prefix-NNNN.
struct NodePool {
  std::string prefix;
  std::string model;
  int32_t count = 0;
};

struct CreateOptions {
  NodePool nodes{"sb-create", "A100-80GB", 200};
  int32_t slots = 1000;  // per CreateStocks
  int32_t repeats = 5;   // CreateStocks, then DeleteStocks of as many, this often
};

struct ClaimOptions {
  NodePool nodes{"sb-claim", "H100-80GB", 32};
  int32_t stocks = 256;  // kept available for the claimers
  int32_t claimers = 32;
  double rate = 0;  // claims per second due, spread over the claimers; 0 = closed loop
  absl::Duration duration = absl::Seconds(30);
  absl::Duration warmup = absl::Seconds(3);
};

struct ListOptions {
  NodePool nodes{"sb-list", "L4", 125};  // registered only when too few stocks exist
  int32_t min_stocks = 1000;             // at least this many stocks exist before listing
  int32_t page_size = 50;
  std::string spec;  // ListStocks' spec_name filter; empty = every stock
  double rate = 500;
  absl::Duration duration = absl::Seconds(30);
  absl::Duration warmup = absl::Seconds(3);
  int32_t max_in_flight = 1000;
};

struct OpenbOptions {
  std::string nodes_csv, pods_csv;
  uint64_t seed = 42;               // the replay's arrival seed
  std::string policy = "fgd-pack";  // the service's --placement-policy, for the in-process twin
  int32_t node_stride = 1;
  double demand_ratio = 1.0;
  std::string node_prefix;
  std::string spec_prefix = "ob";
};

absl::StatusOr<nlohmann::json> RunCreate(BenchClient& client, const CreateOptions& options);
absl::StatusOr<nlohmann::json> RunClaim(BenchClient& client, const ClaimOptions& options);
absl::StatusOr<nlohmann::json> RunList(BenchClient& client, const ListOptions& options);
absl::StatusOr<nlohmann::json> RunOpenb(BenchClient& client, const OpenbOptions& options);

// Registers the pool's nodes (those already registered are registered again, unchanged).
// Returns the seconds it took.
absl::StatusOr<double> RegisterPool(BenchClient& client, const NodePool& pool);
// A spec of one whole GPU of `model`: 8 cores, 32 GiB, 100 GiB disk.
pb::Spec OneGpuSpec(const std::string& name, const std::string& model);
// Creates stocks of `spec` until at least `want` exist. FAILED_PRECONDITION when they do not fit.
absl::Status EnsureStocks(BenchClient& client, const std::string& spec, int64_t want);

// A LatencyRecorder's summary as JSON: counts, errors by code, percentiles in ms.
nlohmann::json SummaryJson(const gpuaas::bench::LatencySummary& s);

}  // namespace gpuaas::stock::bench
