// stock_bench: benchmarks of a running stock service (and the auth service it logs in to).
// Wiring only; the subcommands live in commands.h.
//
//   stock_bench create [--nodes 200] [--slots 1000] [--repeats 5]
//   stock_bench claim  [--claimers 32] [--rate 0] [--duration 30s] [--stocks 256]
//   stock_bench list   [--rate 500] [--duration 30s] [--page-size 50]
//   stock_bench openb  --nodes-csv openb_node_list_gpu_node.csv --pods-csv
//   openb_pod_list_default.csv
//
// The addresses and the admin's credentials come from the flags, GPUAAS_* variables or the
// nearest .gpuaas/stack.env, as for every gpuaas binary. The JSON report goes to stdout, progress
// and a text summary to stderr. The stock service must not mark the simulated nodes NOT_READY
// while a run lasts: no heartbeats are sent, so start it with a long --node-timeout-seconds
// (run_stock_bench.sh does).
#include <CLI/CLI.hpp>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "bench/stock/commands.h"

namespace gpuaas::stock::bench {
namespace {

struct Durations {
  std::string duration = "30s";
  std::string warmup = "3s";
  std::string timeout = "30s";
};

bool ParseDurationFlag(const std::string& flag, const std::string& text, absl::Duration& out) {
  if (!absl::ParseDuration(text, &out) || out < absl::ZeroDuration()) {
    std::cerr << "error: " << flag << ": want a duration like 30s, got " << text << "\n";
    return false;
  }
  return true;
}

void AddPoolFlags(CLI::App& cmd, NodePool& pool) {
  cmd.add_option("--nodes", pool.count, "simulated nodes of 8 GPUs")->capture_default_str();
  cmd.add_option("--node-prefix", pool.prefix, "their names: PREFIX-NNNN")->capture_default_str();
  cmd.add_option("--model", pool.model, "their GPU model")->capture_default_str();
}

int Main(int argc, char** argv) {
  CLI::App app("stock_bench: benchmarks of a running gpuaas stock service");
  app.require_subcommand(1);
  ConnectFlags connect;
  Durations d;
  app.add_option("--auth-addr", connect.auth_addr, "auth service (GPUAAS_AUTH_ADDR, stack.env)");
  app.add_option("--stock-addr", connect.stock_addr,
                 "stock service (GPUAAS_STOCK_ADDR, stack.env)");
  app.add_option("--user", connect.user, "user to log in as (GPUAAS_ADMIN_USER)");
  app.add_option("--password-file", connect.password_file,
                 "file whose first line is the password (GPUAAS_ADMIN_PASSWORD_FILE)");
  app.add_option("--ca", connect.ca_file, "CA certificate: use TLS (GPUAAS_TLS_CA)");
  app.add_option("--cert", connect.cert_file, "client certificate (GPUAAS_TLS_CERT)");
  app.add_option("--key", connect.key_file, "client key (GPUAAS_TLS_KEY)");
  app.add_option("--timeout", d.timeout, "deadline of each call")->capture_default_str();

  CreateOptions create;
  CLI::App* create_cmd = app.add_subcommand("create", "time CreateStocks of many slots at once");
  AddPoolFlags(*create_cmd, create.nodes);
  create_cmd->add_option("--slots", create.slots, "stocks per CreateStocks")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  create_cmd->add_option("--repeats", create.repeats, "CreateStocks + DeleteStocks rounds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);

  ClaimOptions claim;
  CLI::App* claim_cmd = app.add_subcommand("claim", "concurrent ClaimStock + ReleaseStock loops");
  AddPoolFlags(*claim_cmd, claim.nodes);
  claim_cmd->add_option("--stocks", claim.stocks, "stocks kept available")->capture_default_str();
  claim_cmd->add_option("--claimers", claim.claimers, "concurrent claim loops")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  claim_cmd->add_option("--rate", claim.rate, "claims/s due (open loop); 0 = closed loop")
      ->capture_default_str();
  claim_cmd->add_option("--duration", d.duration, "measured window")->capture_default_str();
  claim_cmd->add_option("--warmup", d.warmup, "unmeasured lead-in")->capture_default_str();

  ListOptions list;
  CLI::App* list_cmd = app.add_subcommand("list", "ListStocks of one page, open loop");
  AddPoolFlags(*list_cmd, list.nodes);
  list_cmd->add_option("--min-stocks", list.min_stocks, "stocks that must exist (made if not)")
      ->capture_default_str();
  list_cmd->add_option("--page-size", list.page_size)->capture_default_str();
  list_cmd->add_option("--spec", list.spec, "ListStocks' spec_name filter");
  list_cmd->add_option("--rate", list.rate, "calls per second")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  list_cmd->add_option("--duration", d.duration, "measured window")->capture_default_str();
  list_cmd->add_option("--warmup", d.warmup, "unmeasured lead-in")->capture_default_str();
  list_cmd->add_option("--concurrency-limit", list.max_in_flight, "max calls in flight")
      ->capture_default_str();
  int connections = 1;
  list_cmd->add_option("--connections", connections, "HTTP/2 connections to spread calls over")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));

  OpenbOptions openb;
  CLI::App* openb_cmd =
      app.add_subcommand("openb", "fill the openb cluster through the service, vs. the engine");
  openb_cmd->add_option("--nodes-csv", openb.nodes_csv, "openb_node_list_gpu_node.csv")
      ->required()
      ->check(CLI::ExistingFile);
  openb_cmd->add_option("--pods-csv", openb.pods_csv, "openb_pod_list_default.csv")
      ->required()
      ->check(CLI::ExistingFile);
  openb_cmd->add_option("--seed", openb.seed, "arrival order seed")->capture_default_str();
  openb_cmd->add_option("--policy", openb.policy, "the service's --placement-policy")
      ->capture_default_str();
  openb_cmd->add_option("--node-stride", openb.node_stride, "every n-th GPU node")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  openb_cmd->add_option("--demand-ratio", openb.demand_ratio, "stop at this share of capacity")
      ->capture_default_str();
  openb_cmd->add_option("--node-prefix", openb.node_prefix, "prepended to the trace's node names");
  openb_cmd->add_option("--spec-prefix", openb.spec_prefix, "spec names start with it")
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  absl::Duration duration, warmup;
  if (!ParseDurationFlag("--duration", d.duration, duration) ||
      !ParseDurationFlag("--warmup", d.warmup, warmup) ||
      !ParseDurationFlag("--timeout", d.timeout, connect.timeout)) {
    return 2;
  }
  claim.duration = list.duration = duration;
  claim.warmup = list.warmup = warmup;

  absl::StatusOr<std::unique_ptr<BenchClient>> client =
      BenchClient::Connect(connect, list_cmd->parsed() ? connections - 1 : 0);
  absl::StatusOr<nlohmann::json> report = absl::UnknownError("no subcommand");
  if (!client.ok()) {
    report = client.status();
  } else if (create_cmd->parsed()) {
    report = RunCreate(**client, create);
  } else if (claim_cmd->parsed()) {
    report = RunClaim(**client, claim);
  } else if (list_cmd->parsed()) {
    report = RunList(**client, list);
  } else if (openb_cmd->parsed()) {
    report = RunOpenb(**client, openb);
  }
  if (!report.ok()) {
    std::cerr << "error: " << report.status() << "\n";
    return 1;
  }
  std::cout << report->dump() << std::endl;
  return 0;
}

}  // namespace
}  // namespace gpuaas::stock::bench

int main(int argc, char** argv) { return gpuaas::stock::bench::Main(argc, argv); }
