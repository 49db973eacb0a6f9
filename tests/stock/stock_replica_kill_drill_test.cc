// The replica kill drill (issue 25): two gpuaas-stock processes on one database behind one
// address, "127.0.0.1:a,127.0.0.1:b", and a client::StockClient over it. Four clients call
// steadily (GetSpec and ListStocks, which the channel's retry policy repeats; CreateStocks and
// DeleteStocks with operation ids, which the typed client repeats); a replica is killed with
// SIGKILL in the middle. No call may fail, and the survivor serves every call made after the
// kill. Prints the numbers bench/RESULTS.md "Replica kill" quotes.
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libs/client/channel.h"
#include "libs/client/stock_client.h"
#include "libs/rpc/metrics_scrape_test_util.h"
#include "libs/testing/service_dsn.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/child_process.h"
#include "tests/stock/stock_test_base.h"

namespace gpuaas::stock::testing {
namespace {

using gpuaas::testing::ChildProcess;
using gpuaas::testing::FreePort;
using gpuaas::testing::WaitServing;

constexpr int kClients = 4;
constexpr absl::Duration kBeforeKill = absl::Seconds(3);
constexpr absl::Duration kAfterKill = absl::Seconds(4);
constexpr absl::Duration kAroundKill = absl::Seconds(1);  // latency window: kill ± this

struct Replica {
  std::string address;
  int metrics_port = 0;
  std::unique_ptr<ChildProcess> process;
};

// RPCs a replica completed, from its /metrics.
double Served(const Replica& replica) {
  absl::StatusOr<std::string> text = rpc::test::ScrapeMetrics(replica.metrics_port);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) {
    return 0;
  }
  absl::StatusOr<rpc::test::Exposition> parsed = rpc::test::Exposition::Parse(*text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  double sum = 0;
  for (const auto& sample : parsed->All("gpuaas_rpc_requests_total")) {
    sum += sample.value;
  }
  return sum;
}

struct Tally {
  absl::Mutex mu;
  int calls ABSL_GUARDED_BY(mu) = 0;
  int started_after_kill ABSL_GUARDED_BY(mu) = 0;
  int in_flight_at_kill ABSL_GUARDED_BY(mu) = 0;
  int failed ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::string> failures ABSL_GUARDED_BY(mu);
  absl::Duration max_latency ABSL_GUARDED_BY(mu);
  absl::Duration max_latency_around_kill ABSL_GUARDED_BY(mu);
};

using StockReplicaKillDrillTest = StockTest;

TEST_F(StockReplicaKillDrillTest, KillNineOneReplicaUnderLoadFailsNoCall) {
  gpuaas::testing::TempDir dir;
  Replica replicas[2];
  for (int i = 0; i < 2; ++i) {
    replicas[i].address = absl::StrCat("127.0.0.1:", FreePort());
    replicas[i].metrics_port = FreePort();
    replicas[i].process = std::make_unique<ChildProcess>(
        std::vector<std::string>{
            GPUAAS_STOCK_BINARY, "--listen=" + replicas[i].address,
            absl::StrCat("--metrics-listen=127.0.0.1:", replicas[i].metrics_port),
            "--db-dsn=" + gpuaas::testing::ServiceDsn(dsn(), "stock"),
            "--auth-addr=" + stack_->address()},
        (dir.path() / absl::StrCat("stock-", i, ".log")).string());
    ASSERT_TRUE(WaitServing(replicas[i].address));
  }
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(Register(SimulatedNode(absl::StrCat("n", i), 8, "A100-80GB", "64")).ok());
  }
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());

  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<grpc::Channel> channel,
      client::OpenChannel(absl::StrCat(replicas[0].address, ",", replicas[1].address), {}));
  const client::StockClient stock(channel, absl::Seconds(5));

  Tally tally;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> kill_time_ns{std::numeric_limits<int64_t>::max()};
  auto timed = [&](const char* what, auto call) {
    const absl::Time start = absl::Now();
    absl::Status status = call();
    const absl::Duration took = absl::Now() - start;
    const absl::Time kill_time = absl::FromUnixNanos(kill_time_ns.load());
    absl::MutexLock lock(&tally.mu);
    ++tally.calls;
    tally.started_after_kill += start > kill_time;
    tally.in_flight_at_kill += start < kill_time && start + took > kill_time;
    tally.max_latency = std::max(tally.max_latency, took);
    if (start + took > kill_time - kAroundKill && start < kill_time + kAroundKill) {
      tally.max_latency_around_kill = std::max(tally.max_latency_around_kill, took);
    }
    tally.failed += !status.ok();
    if (!status.ok() && tally.failures.size() < 20) {  // the first few say what went wrong
      tally.failures.push_back(absl::StrCat(what, ": ", status.ToString()));
    }
  };
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      const auto call = client::CallContext().set_bearer_token(admin_);
      for (int round = 0; !stop; ++round) {
        timed("GetSpec", [&] {
          pb::GetSpecRequest req;
          req.set_spec_name("a100.1x");
          return stock.GetSpec(req, call).status();
        });
        timed("ListStocks", [&] {
          pb::ListStocksRequest req;
          req.set_spec_name("a100.1x");
          return stock.ListStocks(req, call).status();
        });
        timed("CreateStocks", [&] {
          pb::CreateStocksRequest req;
          req.set_spec_name("a100.1x");
          req.set_number(1);
          req.set_allow_partial(true);
          req.set_operation_id(absl::StrCat("create-", c, "-", round));
          return stock.CreateStocks(req, call).status();
        });
        timed("DeleteStocks", [&] {
          pb::DeleteStocksRequest req;
          req.set_spec_name("a100.1x");
          req.set_number(1);
          req.set_operation_id(absl::StrCat("delete-", c, "-", round));
          return stock.DeleteStocks(req, call).status();
        });
      }
    });
  }

  absl::SleepFor(kBeforeKill);
  const double victim_served = Served(replicas[0]);
  const double survivor_served_at_kill = Served(replicas[1]);
  kill_time_ns = absl::ToUnixNanos(absl::Now());
  ASSERT_EQ(kill(replicas[0].process->pid(), SIGKILL), 0);
  absl::SleepFor(kAfterKill);
  stop = true;
  for (std::thread& t : clients) {
    t.join();
  }
  const double survivor_served_after_kill = Served(replicas[1]) - survivor_served_at_kill;

  absl::MutexLock lock(&tally.mu);
  std::printf(
      "replica kill drill: %d calls by %d clients over %.1f s (kill -9 after %.1f s); "
      "failed %d; %d in flight at the kill; %d calls started after the kill, the survivor completed %.0f RPCs after it; "
      "before the kill the victim had served %.0f, the survivor %.0f; max latency %.0f ms, "
      "within %.0f s of the kill %.0f ms\n",
      tally.calls, kClients, absl::ToDoubleSeconds(kBeforeKill + kAfterKill),
      absl::ToDoubleSeconds(kBeforeKill), tally.failed, tally.in_flight_at_kill, tally.started_after_kill,
      survivor_served_after_kill, victim_served, survivor_served_at_kill,
      absl::ToDoubleMilliseconds(tally.max_latency), absl::ToDoubleSeconds(kAroundKill),
      absl::ToDoubleMilliseconds(tally.max_latency_around_kill));
  EXPECT_EQ(tally.failed, 0);
  EXPECT_EQ(tally.failures, std::vector<std::string>{});
  EXPECT_GT(victim_served, 0);  // the calls were spread over both before the kill
  EXPECT_GT(tally.started_after_kill, 0);
  EXPECT_GE(survivor_served_after_kill, tally.started_after_kill);
  EXPECT_EQ(Overbooked(), std::vector<std::string>{});
  EXPECT_EQ(replicas[1].process->Terminate(), 0);
}

}  // namespace
}  // namespace gpuaas::stock::testing
